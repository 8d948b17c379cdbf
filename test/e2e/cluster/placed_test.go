package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// osReleaseFixtures are the os-release files of pkg/host/os's detection
// tests: real distributions, each detected as a host of that distribution
// would be.
const osReleaseFixtures = "../../../pkg/host/os/testdata/os-release"

// What the walks ask a host to prove a package file installed follows the
// family detected from its os-release, so the inventory backend's
// assertions hold on Enterprise Linux and Ubuntu hosts as on Debian ones:
// rpm where the RPM route goes, dpkg where the APT route goes, and no
// package query where only the binary route goes.
func TestPackageInstalledCmdFollowsTheFamily(t *testing.T) {
	// fixture -> what the command must ask of the package tool
	for fixture, tool := range map[string]string{
		"rhel-9.6": "rpm -qp", "rhel-10.0": "rpm -qp", "rocky-linux-9.5": "rpm -qp", "almalinux-9.6": "rpm -qp",
		"oracle-linux-9.5": "rpm -qp", "centos-stream-9": "rpm -qp", "amazon-linux-2023": "rpm -qp", "fedora-42": "rpm -qp",
		"debian-12-bookworm": "dpkg-deb -f", "debian-13-trixie": "dpkg-deb -f", "ubuntu-22.04-ga": "dpkg-deb -f", "ubuntu-24.04-ga": "dpkg-deb -f",
		// The binary route only: image-based Fedora, SUSE, Alpine, Flatcar.
		"fedora-coreos-40": "", "sles-15-sp6": "", "alpine-3.23.2": "", "flatcar-container-linux-4459.0.0": "",
	} {
		body, err := os.ReadFile(filepath.Join(osReleaseFixtures, fixture))
		require.NoError(t, err)
		rel, err := hostos.ParseOSRelease(body)
		require.NoError(t, err, fixture)
		o := hostos.Detect(rel)
		cmd, err := packageInstalledCmd(o, "/var/lib/cargoship/pkgs/engine.pkg")
		if tool == "" {
			require.Error(t, err, "%s (%s): no package route, nothing to query", fixture, o.Family)
			continue
		}
		require.NoError(t, err, fixture)
		assert.Contains(t, cmd, tool, "%s (%s)", fixture, o.Family)
		other := map[string]string{"rpm -qp": "dpkg", "dpkg-deb -f": "rpm"}[tool]
		assert.NotContains(t, cmd, other, "%s: no %s on this family", fixture, other)
	}
}
