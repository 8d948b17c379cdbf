package action

import "github.com/colonel-byte/cargoship/pkg/phase"

// ApplyPhases is the ordered phase list of `cargoship apply` (seeds/003).
func ApplyPhases() []phase.Phase {
	connect := &phase.Connect{}
	lock := &phase.AcquireLock{}
	return []phase.Phase{
		connect,
		&phase.DetectOS{},
		&phase.GatherFacts{},
		&phase.ValidateHosts{},
		&phase.DistroFacts{},
		&phase.RemovedNodes{},
		lock,
		phase.NewPrepareHosts(),
		phase.NewPrepareEL(),
		phase.NewFapolicyd(),
		phase.NewSELinuxPolicy(),
		phase.NewUpdateEtcHosts(),
		&phase.UpdateFirewall{},
		&phase.UploadFiles{},
		phase.NewUploadRPM(),
		phase.NewUploadAPT(),
		phase.NewUploadBinary(),
		&phase.ImportImages{},
		&phase.ConfigureEngine{},
		phase.NewInitializeControllers(),
		&phase.ApplyManifests{},
		phase.NewInitializeWorkers(),
		phase.NewUpgradeControllers(),
		phase.NewUpgradeWorkers(),
		&phase.InstallStaged{},
		phase.NewSyncConfigController(),
		phase.NewSyncConfigWorker(),
		&phase.Kubeconfig{},
		&phase.LabelNodes{},
		&phase.ReleaseLock{Lock: lock},
		&phase.Disconnect{Connect: connect},
	}
}

// PreparePhases runs only the preparation phases of apply.
func PreparePhases() []phase.Phase {
	connect := &phase.Connect{}
	lock := &phase.AcquireLock{}
	return []phase.Phase{
		connect,
		&phase.DetectOS{},
		&phase.GatherFacts{},
		&phase.ValidateHosts{},
		lock,
		phase.NewPrepareHosts(),
		phase.NewPrepareEL(),
		phase.NewFapolicyd(),
		phase.NewSELinuxPolicy(),
		phase.NewUpdateEtcHosts(),
		&phase.UpdateFirewall{},
		&phase.ReleaseLock{Lock: lock},
		&phase.Disconnect{Connect: connect},
	}
}

// StagePhases is apply's staging half (seeds/001): every phase that stages
// files and renders configuration, and none that installs, starts or
// queries the engine. Benchmarks and the stage-only suite walk it.
func StagePhases() []phase.Phase {
	var out []phase.Phase
	for _, p := range ApplyPhases() {
		switch p.Title() {
		case "Import images", "Initialize Controller", "Apply manifests", "Initialize Worker",
			"Upgrade Controller", "Upgrade Worker", "Install staged files",
			"Sync Registry Config Controller", "Sync Registry Config Worker",
			"Updating kubeconfig file with the current cluster", "Labeling nodes with their profile group":
			continue
		}
		out = append(out, p)
	}
	return out
}
