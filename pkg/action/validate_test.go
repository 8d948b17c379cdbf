package action

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

const apiTestdata = "../api/v1alpha1/testdata"

// TestCheckWithDistroRefusesWhatValidateRefuses: apply checks the
// inventory against its package's definition as validate --distro does,
// before any host is touched (issue 11: 10).
func TestCheckWithDistroRefusesWhatValidateRefuses(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct{ cluster, distro, want string }{
		{"cross/01-upstream-profile-and-registry-auth.yaml", "valid/distro/earlier-upstream-with-version.yaml", "spec.config.registries[0].auth: with pkg.tar.zst (spec.type upstream): containerd reads no credentials"},
		{"cross/02-k3s-profile-owned-paths.yaml", "valid/distro/k3s-minimal.yaml", "spec.config.profiles[0].engineConfig.data-dir: with pkg.tar.zst (spec.type k3s)"},
	} {
		d, _, err := v1alpha1.LoadDistroFile(filepath.Join(apiTestdata, tc.distro))
		if err != nil {
			t.Fatal(err)
		}
		cluster := filepath.Join(apiTestdata, tc.cluster)
		data, err := os.ReadFile(cluster)
		if err != nil {
			t.Fatal(err)
		}
		// From the file (the CLI) and from memory (the provider): the same refusal.
		for _, o := range []Options{
			{ClusterPath: cluster, PackagePath: "pkg.tar.zst", Log: log},
			{ClusterPath: cluster, ClusterData: data, PackagePath: "pkg.tar.zst", Log: log},
		} {
			err = checkWithDistro(o, d)
			var de *v1alpha1.DocumentError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), cluster+":") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s with %s (in memory: %t): %v; want a document error naming %q", tc.cluster, tc.distro, o.ClusterData != nil, err, tc.want)
			}
		}
	}
	d, _, err := v1alpha1.LoadDistroFile(filepath.Join(apiTestdata, "valid/distro/k3s-minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWithDistro(Options{ClusterPath: filepath.Join(apiTestdata, "valid/cluster/every-field.yaml"), PackagePath: "pkg", Log: log}, d); err != nil {
		t.Errorf("a valid pair: %v", err)
	}
}

// TestCheckWithDistroRunsTheHAChecks: apply's preflight refuses what the
// static HA check refuses, whichever document the finding is in
// (docs/validate.md, "HA checks").
func TestCheckWithDistroRunsTheHAChecks(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct{ cluster, distro, want string }{
		{"ha/06-cluster-init-on-every-controller.yaml", "ha/06-cluster-init.distro.yaml", "06-cluster-init.distro.yaml:12:23: spec.config.engine.config.cluster-init: with "},
		{"ha/07-profile-joins-founder-elsewhere.yaml", "ha/good.distro.yaml", "07-profile-joins-founder-elsewhere.yaml:17:19: spec.config.profiles[0].engineConfig.server: with pkg.tar.zst (spec.type k3s): sets server"},
		{"ha/12-vip-in-service-cidr.yaml", "ha/good.distro.yaml", "spec.config.vip.address: with pkg.tar.zst (spec.type k3s): 10.43.0.100 is inside the Service CIDR"},
	} {
		d, _, err := v1alpha1.LoadDistroFile(filepath.Join(apiTestdata, tc.distro))
		if err != nil {
			t.Fatal(err)
		}
		o := Options{ClusterPath: filepath.Join(apiTestdata, tc.cluster), PackagePath: "pkg.tar.zst", Log: log}
		err = checkWithDistro(o, d)
		var de *v1alpha1.DocumentError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s: %v; want a document error naming %q", tc.cluster, tc.distro, err, tc.want)
		}
	}
	d, _, err := v1alpha1.LoadDistroFile(filepath.Join(apiTestdata, "ha/good.distro.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWithDistro(Options{ClusterPath: filepath.Join(apiTestdata, "ha/good-three-controllers.yaml"), PackagePath: "pkg", Log: log}, d); err != nil {
		t.Errorf("the good HA pair: %v", err)
	}
}
