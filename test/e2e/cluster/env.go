package cluster

import (
	"fmt"
	"os"
	"strconv"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// The suite's knobs, all under one prefix. Each is read when asked rather
// than at package init, so a caller (a mage target, a test) can set one in
// process.
const (
	envPrefix    = "CARGOSHIP_E2E_"
	envBackend   = envPrefix + "BACKEND"
	envInventory = envPrefix + "INVENTORY"
	envJoinHost  = envPrefix + "JOIN_HOST"
	envStageOnly = envPrefix + "STAGE_ONLY"
	envUpgrade   = envPrefix + "UPGRADE"
	envKeep      = envPrefix + "KEEP_FLEET"
	envDistro    = envPrefix + "DISTRO"
	// envPackage and envUpgradePackage are packages a user built, walked
	// instead of the test package (docs/e2e.md, "Your own package").
	envPackage        = envPrefix + "PACKAGE"
	envUpgradePackage = envPrefix + "UPGRADE_PACKAGE"
	// envVMMemory sizes each guest of the microvm backend, in MiB.
	envVMMemory = envPrefix + "VM_MEMORY"
	// envNoFanout walks with peer fan-out off (--fanout=false).
	envNoFanout = envPrefix + "NO_FANOUT"
	// envFleet names the fleet the suite brings up, so runs of it can be
	// up side by side (hack/test.sh runs tiers in parallel lanes).
	envFleet = envPrefix + "FLEET"
)

// Backends the suite knows.
const (
	backendContainer = "container"
	backendMicroVM   = "microvm"
	backendInventory = "inventory"
)

// boolEnv reads a boolean knob; unset is false, and a value that is not a
// boolean is an error rather than a silent false.
func boolEnv(name string) (bool, error) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean (true, false, 1, 0)", name, v)
	}
	return b, nil
}

// stageOnly says the run stops asserting at the boundary phase 19 draws:
// everything before it stages files and renders configuration, everything
// after it installs, starts or queries the engine
// (docs/reference/behaviour.md, "The staging half of apply").
func stageOnly() (bool, error) { return boolEnv(envStageOnly) }

// upgradeEnabled opts into the upgrade walk.
func upgradeEnabled() (bool, error) { return boolEnv(envUpgrade) }

// vmMemory is CARGOSHIP_E2E_VM_MEMORY: 0 (the backend's default) when
// unset, else a positive number of MiB.
func vmMemory() (int, error) {
	v := os.Getenv(envVMMemory)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 512 {
		return 0, fmt.Errorf("%s=%q: want a guest's memory in MiB, at least 512", envVMMemory, v)
	}
	return n, nil
}

// backendName is the selected backend, container by default.
func backendName() string {
	if v := os.Getenv(envBackend); v != "" {
		return v
	}
	return backendContainer
}

// suiteDistro is the engine the test package installs, k3s by default
// (docs/e2e.md, Knobs). upstream is refused rather than skipped: its walks
// need real Kubernetes, which the test engine does not stand in for.
func suiteDistro() (e2eutil.Distro, error) {
	switch v := os.Getenv(envDistro); v {
	case "", v1alpha1.EngineK3s:
		return e2eutil.K3s, nil
	case v1alpha1.EngineRKE2:
		return e2eutil.RKE2, nil
	case v1alpha1.EngineUpstream:
		return e2eutil.Distro{}, fmt.Errorf("%s=%s cannot run yet: the upstream walks need kubeadm, a kubelet and a control plane "+
			"of real Kubernetes built from source, and the test engine is a double of k3s and rke2 only (docs/test-engine.md); "+
			"use %s or %s", envDistro, v, v1alpha1.EngineK3s, v1alpha1.EngineRKE2)
	default:
		return e2eutil.Distro{}, fmt.Errorf("%s=%q is not a distro: use %s, %s or %s", envDistro, v, v1alpha1.EngineK3s, v1alpha1.EngineRKE2, v1alpha1.EngineUpstream)
	}
}

// noFanout walks with every file sent from the operator.
func noFanout() (bool, error) { return boolEnv(envNoFanout) }
