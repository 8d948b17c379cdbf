package phase

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// seFleet has one host per (os-release fixture, SELinux fact) pair.
func seFleet(t *testing.T, hosts map[string]string) (*node.Fleet, map[string]*node.Host) {
	t.Helper()
	byName := map[string]*node.Host{}
	var all node.Hosts
	for fixture, mode := range hosts {
		rel := releaseFixture(t, fixture)
		o := hostos.Detect(rel)
		h := &node.Host{Spec: &v1alpha1.Host{Hostname: fixture, Role: v1alpha1.RoleController},
			OS: o, Facts: node.Facts{Family: o.Family, Arch: "amd64", SELinux: mode}}
		byName[fixture] = h
		all = append(all, h)
	}
	d := &v1alpha1.Distro{Spec: v1alpha1.DistroSpec{Config: v1alpha1.DistroConfig{OS: v1alpha1.OSConfig{
		SELinux: &v1alpha1.SELinux{Booleans: map[string]bool{"container_manage_cgroup": true}}}}}}
	pkg := &pkgfile.Package{Manifest: &pkgfile.Manifest{Package: pkgfile.Index{}}}
	return &node.Fleet{Distro: d, Package: pkg, Hosts: all, Report: &node.Report{}}, byName
}

// Phases 9 and 11 claim every host whose SELinux is enabled, enforcing or
// permissive, whatever its family (Tumbleweed and SLES enforce it too),
// and no host where it is disabled or absent.
func TestSELinuxPhasesKeyOnSELinuxState(t *testing.T) {
	s, h := seFleet(t, map[string]string{
		"opensuse-tumbleweed": "enforcing",
		"sles-15-sp7":         "permissive",
		"rocky-linux-9.5":     "permissive",
		"almalinux-9.6":       "enforcing",
		"rhel-9.6":            "disabled",
		"debian-12-bookworm":  "absent",
	})
	p9, p11 := NewPrepareEL(), NewSELinuxPolicy()
	for _, p := range []interface {
		Phase
		Prepare(context.Context) error
	}{p9, p11} {
		Bind(p, s)
		require.NoError(t, p.Prepare(context.Background()))
	}
	for _, name := range []string{"opensuse-tumbleweed", "sles-15-sp7", "rocky-linux-9.5", "almalinux-9.6"} {
		assert.Contains(t, p9.steps, h[name], "phase 9 claims %s", name)
		assert.Contains(t, p11.steps, h[name], "phase 11 claims %s", name)
	}
	for _, name := range []string{"rhel-9.6", "debian-12-bookworm"} {
		assert.NotContains(t, p9.steps, h[name], "phase 9 leaves %s", name)
		assert.NotContains(t, p11.steps, h[name], "phase 11 leaves %s", name)
	}
}

// releaseFixture reads one of hostos's verbatim os-release fixtures.
func releaseFixture(t *testing.T, name string) hostos.Release {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "host", "os", "testdata", "os-release", name))
	require.NoError(t, err)
	rel, err := hostos.ParseOSRelease(data)
	require.NoError(t, err)
	return rel
}

// On an rpm-route host phase 9 uploads the route's other rpms with the
// policy and resolves them together; keys are imported, never installed.
func TestPrepareELResolvesTheRouteWithThePolicy(t *testing.T) {
	s, h := seFleet(t, map[string]string{"rocky-linux-9.5": "enforcing", "opensuse-tumbleweed": "enforcing"})
	rpm := func(name, target string) pkgfile.Entry {
		return pkgfile.Entry{Name: name, Kind: pkgfile.KindOS, Target: target,
			Selector: &v1alpha1.Selector{Package: v1alpha1.RouteRPM, OS: v1alpha1.FamilyEnterpriseLinux}}
	}
	s.Package.Manifest.Package.Entries = []pkgfile.Entry{
		rpm("os/0", "/etc/pki/rpm-gpg/RPM-GPG-KEY-rancher"),
		rpm("os/1", "/var/lib/rancher/rke2/rpm/container-selinux-2.232.1-1.el9.noarch.rpm"),
		rpm("os/2", "/var/lib/rancher/rke2/rpm/rke2-selinux-0.22-1.el9.noarch.rpm"),
		rpm("os/3", "/var/lib/rancher/rke2/rpm/rke2-common-1.35.4~rke2r1-0.el9.x86_64.rpm"),
		rpm("os/4", "/var/lib/rancher/rke2/rpm/libnftnl-1.2.6-4.el9_4.x86_64.rpm"),
	}
	p := NewPrepareEL()
	Bind(p, s)
	require.NoError(t, p.Prepare(context.Background()))
	step := p.steps[h["rocky-linux-9.5"]][0].(hostos.SELinuxEnabled).Step.(requireContainerSELinux)
	assert.Equal(t, []string{"/var/lib/rancher/rke2/rpm/container-selinux-2.232.1-1.el9.noarch.rpm", "/var/lib/rancher/rke2/rpm/rke2-selinux-0.22-1.el9.noarch.rpm"}, step.files)
	assert.Equal(t, []string{"/etc/pki/rpm-gpg/RPM-GPG-KEY-rancher"}, step.keys)
	assert.Equal(t, []string{"/var/lib/rancher/rke2/rpm/rke2-common-1.35.4~rke2r1-0.el9.x86_64.rpm", "/var/lib/rancher/rke2/rpm/libnftnl-1.2.6-4.el9_4.x86_64.rpm"}, step.with)
	assert.Len(t, p.uploads[h["rocky-linux-9.5"]], 5)
	assert.Empty(t, p.uploads[h["opensuse-tumbleweed"]], "the EL rpms are not for a SUSE host")
}

// container-selinux is required where the policy comes as that package
// (an rpm database answers); Flatcar builds it into its own policy and has
// no rpm, so phase 9 does not refuse it.
func TestRequireContainerSELinuxOnlyWithAnRPMDatabase(t *testing.T) {
	ctx := context.Background()
	step := requireContainerSELinux{cfg: hostos.For(hostos.Detect(releaseFixture(t, "flatcar-container-linux-4459.0.0")))}
	flatcar := (&hosttest.Fake{Name: "flatcar", Strict: true}).On("command -v", "none\n")
	_, err := step.Apply(ctx, flatcar)
	require.NoError(t, err, "no rpm database: nothing to require")

	step.cfg = hostos.EnterpriseLinux{}
	el := (&hosttest.Fake{Name: "rocky", Strict: true}).On("command -v", "rpm\n").On("rpm -q ", "package container-selinux is not installed\n")
	_, err = step.Apply(ctx, el)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "container-selinux is not installed")
}
