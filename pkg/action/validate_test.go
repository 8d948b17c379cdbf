package action

import (
	"errors"
	"log/slog"
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
		err = checkWithDistro(cluster, d, "pkg.tar.zst", log)
		var de *v1alpha1.DocumentError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), cluster+":") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s: %v; want a document error naming %q", tc.cluster, tc.distro, err, tc.want)
		}
	}
	d, _, err := v1alpha1.LoadDistroFile(filepath.Join(apiTestdata, "valid/distro/k3s-minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkWithDistro(filepath.Join(apiTestdata, "valid/cluster/every-field.yaml"), d, "pkg", log); err != nil {
		t.Errorf("a valid pair: %v", err)
	}
}
