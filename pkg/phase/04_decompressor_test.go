package phase

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// validateWith binds phase 4 to a fleet of one Debian worker whose PATH
// is exactly bin, with the package entries given.
func validateWith(t *testing.T, engineName, bin string, entries ...pkgfile.Entry) (*ValidateHosts, *node.Host) {
	t.Helper()
	eng, err := engine.For(engineName)
	require.NoError(t, err)
	h := &node.Host{
		Spec:  &v1alpha1.Host{Hostname: "kw0", Role: v1alpha1.RoleWorker},
		Conn:  &hosttest.Local{Name: "kw0", Env: []string{"PATH=" + bin}},
		OS:    hostos.OS{Family: v1alpha1.FamilyDebian},
		Facts: node.Facts{Family: v1alpha1.FamilyDebian, Arch: "amd64"},
	}
	pkg := &pkgfile.Package{Manifest: &pkgfile.Manifest{Package: pkgfile.Index{Entries: entries}}}
	p := &ValidateHosts{}
	Bind(p, &node.Fleet{Engine: eng, Package: pkg, Hosts: node.Hosts{h}, Report: &node.Report{}})
	return p, h
}

var zstdImages = pkgfile.Entry{Name: "images/amd64/images.tar.zst", Kind: pkgfile.KindImages, Architecture: "amd64"}

// kubeadm's images go through `zstd -dc | ctr import` in phase 18: a host
// without zstd is refused in phase 4, naming the archive and the ways out,
// unless the package routes a zstd package to it. k3s reads its images
// directory itself and needs no zstd.
func TestValidateHostsWantsZstdForAnImportedZstdArchive(t *testing.T) {
	ctx := context.Background()
	// Each PATH holds sh, which the host's commands run through.
	shOnly := func() string {
		dir := t.TempDir()
		require.NoError(t, os.Symlink("/bin/sh", filepath.Join(dir, "sh")))
		return dir
	}
	empty := shOnly()

	p, h := validateWith(t, v1alpha1.EngineUpstream, empty, zstdImages)
	problem, err := p.decompressorProblem(ctx, h)
	require.NoError(t, err)
	assert.Contains(t, problem, "images.tar.zst")
	assert.Contains(t, problem, "no zstd")
	assert.Contains(t, problem, "imageConfig.compression gz")

	withZstd := shOnly()
	require.NoError(t, os.WriteFile(filepath.Join(withZstd, "zstd"), []byte("#!/bin/sh\n"), 0o755))
	p, h = validateWith(t, v1alpha1.EngineUpstream, withZstd, zstdImages)
	problem, err = p.decompressorProblem(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, problem, "zstd on the host")

	carried := pkgfile.Entry{Name: "os/0/zstd_1.5.4+dfsg2-5_amd64.deb", Kind: pkgfile.KindOS, Architecture: "amd64",
		Selector: &v1alpha1.Selector{Package: v1alpha1.RouteAPT}}
	p, h = validateWith(t, v1alpha1.EngineUpstream, empty, zstdImages, carried)
	problem, err = p.decompressorProblem(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, problem, "the package carries zstd for the host")

	p, h = validateWith(t, v1alpha1.EngineK3s, empty, zstdImages)
	problem, err = p.decompressorProblem(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, problem, "k3s imports its images directory itself")

	gz := pkgfile.Entry{Name: "images/amd64/images.tar.gz", Kind: pkgfile.KindImages, Architecture: "amd64"}
	p, h = validateWith(t, v1alpha1.EngineUpstream, empty, gz)
	problem, err = p.decompressorProblem(ctx, h)
	require.NoError(t, err)
	assert.Empty(t, problem, "gzip is on every host")
}

func TestIsZstdPackage(t *testing.T) {
	for name, want := range map[string]bool{
		"zstd_1.5.4+dfsg2-5_amd64.deb":   true,
		"zstd-1.5.5-1.el9.x86_64.rpm":    true,
		"libzstd-1.5.5-1.el9.x86_64.rpm": false,
		"libzstd1_1.5.4_amd64.deb":       false,
		"zstd-1.5.5.tar.gz":              false,
	} {
		assert.Equal(t, want, isZstdPackage(name), name)
	}
}
