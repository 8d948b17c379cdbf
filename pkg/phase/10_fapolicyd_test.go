package phase

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// The k3s example's binary is copied to /usr/local/bin/k3s, outside the
// rpm database fapolicyd trusts and outside its dir= rules: phase 10 gives
// it an execute rule on fapolicyd hosts, the host's architecture only.
func TestFapolicydTrustsTheEngineBinary(t *testing.T) {
	bin := func(target, arch string) pkgfile.Entry {
		return pkgfile.Entry{Kind: pkgfile.KindOS, Target: target, Executable: true,
			Selector: &v1alpha1.Selector{Package: v1alpha1.RouteBinary, Architecture: arch}}
	}
	entries := []pkgfile.Entry{
		bin("/usr/local/bin/k3s", "amd64"),
		bin("/usr/local/bin/k3s-arm64-only", "arm64"),
		bin("/usr/local/bin/k3s-killall.sh", ""),
		{Kind: pkgfile.KindOS, Target: "/etc/systemd/system/k3s.service", Selector: &v1alpha1.Selector{Package: v1alpha1.RouteBinary}},
	}
	el := hostFor(v1alpha1.RoleController, v1alpha1.FamilyEnterpriseLinux, "amd64")
	el.Facts.Fapolicyd = true
	plain := hostFor(v1alpha1.RoleWorker, v1alpha1.FamilyEnterpriseLinux, "amd64")
	pkg := &pkgfile.Package{Manifest: &pkgfile.Manifest{Package: pkgfile.Index{Entries: entries}}}
	d := &v1alpha1.Distro{}
	d.Spec.Config.OS.Fapolicyd = "allow perm=any all : dir=/var/lib/rancher/"
	p := NewFapolicyd()
	Bind(p, &node.Fleet{Distro: d, Package: pkg, Hosts: node.Hosts{el, plain}, Report: &node.Report{}})
	require.NoError(t, p.Prepare(context.Background()))
	require.Len(t, p.steps[el], 1)
	f, ok := p.steps[el][0].(hostos.Fapolicyd)
	require.True(t, ok)
	assert.Equal(t, []string{"/usr/local/bin/k3s", "/usr/local/bin/k3s-killall.sh"}, f.Trusted)
	assert.NotContains(t, p.steps, plain, "fapolicyd does not run there")
}
