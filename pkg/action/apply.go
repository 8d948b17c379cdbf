package action

import (
	"slices"

	"github.com/colonel-byte/cargoship/pkg/phase"
)

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
		&phase.ConfigureVIP{},
		phase.NewInitializeControllers(),
		&phase.WaitVIP{},
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

// PreparePhases runs only the preparation phases of apply: those whose
// class is lifecycle, host preflight or prepare, taken from ApplyPhases so
// the two lists cannot disagree on order or wiring.
func PreparePhases() []phase.Phase {
	return applyPhasesOf(phase.Lifecycle, phase.Preflight, phase.Prepare)
}

// StagePhases is apply's staging half (docs/reference/behaviour.md, "The
// staging half of apply"): every phase phase.InStageHalf keeps, that is
// every phase but those of the engine class, so none installs, starts or
// queries the engine. Benchmarks walk it; the stage-only suite walks it
// and stands down the rest by the same predicate.
func StagePhases() []phase.Phase {
	var out []phase.Phase
	for _, p := range ApplyPhases() {
		if phase.InStageHalf(p) {
			out = append(out, p)
		}
	}
	return out
}

// applyPhasesOf is ApplyPhases kept to the phases of the given classes.
func applyPhasesOf(classes ...phase.Class) []phase.Phase {
	var out []phase.Phase
	for _, p := range ApplyPhases() {
		if c, ok := phase.ClassOf(p); ok && slices.Contains(classes, c) {
			out = append(out, p)
		}
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
