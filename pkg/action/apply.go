package action

import "github.com/colonel-byte/cargoship/pkg/phase"

// ApplyPhases is the ordered phase list of `cargoship apply` (docs/apply.md).
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

// PreparePhases runs only the preparation phases of apply, taken from
// ApplyPhases so the two lists cannot disagree on order or wiring.
func PreparePhases() []phase.Phase {
	keep := map[string]bool{
		"Connect to hosts": true, "Detect host operating systems": true, "Gather host facts": true,
		"Validate hosts": true, "Acquire exclusive host lock": true, "Prepare hosts": true,
		"Prepare hosts - Enterprise Linux support":                  true,
		"Prepare hosts - Enterprise Linux support - Fapolicyd":      true,
		"Prepare hosts - Enterprise Linux support - SELinux policy": true,
		"Updating hosts file for clusters nodes":                    true, "Updating hosts firewall": true,
		"Release exclusive host lock": true, "Disconnect from hosts": true,
	}
	var out []phase.Phase
	for _, p := range ApplyPhases() {
		if keep[p.Title()] {
			out = append(out, p)
		}
	}
	return out
}

// StagePhases is apply's staging half (docs/reference/behaviour.md, "The
// staging half of apply"): every phase that stages files and renders
// configuration, and none that installs, starts or queries the engine.
// Benchmarks and the stage-only suite walk it.
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

// ResetPhases is the ordered phase list of `cargoship reset`
// (docs/reset.md): the hosts are read and the targets planned, every
// refusal made, before the lock is taken and anything changes.
func ResetPhases() []phase.Phase {
	connect := &phase.Connect{}
	lock := &phase.AcquireLock{}
	plan := &phase.PlanReset{}
	return []phase.Phase{
		connect,
		&phase.DetectOS{},
		&phase.GatherFacts{},
		&phase.ValidateHosts{},
		&phase.DistroFacts{AnyVersion: true},
		plan,
		lock,
		&phase.DrainNodes{Reset: plan},
		&phase.Uninstall{Reset: plan},
		phase.NewForgetHosts(plan),
		&phase.Repoint{Reset: plan},
		&phase.ReleaseLock{Lock: lock},
		&phase.Disconnect{Connect: connect},
	}
}
