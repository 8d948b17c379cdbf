package k8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	r, err := Lookup("v1.35.4")
	require.NoError(t, err)
	assert.Equal(t, V1_35_4, r)
	r, err = Lookup("1.34.4")
	require.NoError(t, err)
	assert.Equal(t, V1_34_4, r)
	_, err = Lookup("1.33.0")
	require.ErrorContains(t, err, "pinned: 1.34.4, 1.35.4")
}

func TestReleaseVersions(t *testing.T) {
	assert.Equal(t, "1", V1_35_4.Major())
	assert.Equal(t, "35", V1_35_4.Minor())
	assert.Equal(t, "v0.35.4", V1_35_4.StagingVersion())
	assert.Equal(t, "v0.34.4", V1_34_4.StagingVersion())
}

func TestImageRefs(t *testing.T) {
	assert.Equal(t, []string{
		"registry.k8s.io/kube-apiserver:v1.35.4",
		"registry.k8s.io/kube-controller-manager:v1.35.4",
		"registry.k8s.io/kube-scheduler:v1.35.4",
		"registry.k8s.io/kube-proxy:v1.35.4",
		"registry.k8s.io/coredns/coredns:v1.13.1",
		"registry.k8s.io/pause:3.10.1",
		"registry.k8s.io/etcd:3.6.6-0",
	}, V1_35_4.ImageRefs())
}

func TestKubeadmClusterConfiguration(t *testing.T) {
	c := V1_34_4.KubeadmClusterConfiguration()
	assert.Contains(t, c, "kubernetesVersion: v1.34.4\n")
	assert.Contains(t, c, "  local:\n    imageTag: \"3.6.5-0\"\n")
	assert.Contains(t, c, "dns:\n  imageTag: \"v1.12.1\"\n")
}

func TestKey(t *testing.T) {
	k := V1_35_4.Key("go1.26.8")
	assert.Len(t, k, 12)
	assert.Equal(t, k, V1_35_4.Key("go1.26.8"), "stable")
	assert.NotEqual(t, k, V1_35_4.Key("go1.26.9"), "the toolchain is in the key")
	assert.NotEqual(t, k, V1_34_4.Key("go1.26.8"))
	r := V1_35_4
	r.Containerd = "2.3.7"
	assert.NotEqual(t, k, r.Key("go1.26.8"))
}

func TestStagingModules(t *testing.T) {
	p := filepath.Join(t.TempDir(), "go.mod")
	require.NoError(t, os.WriteFile(p, []byte(`module k8s.io/kubernetes

require k8s.io/api v0.0.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/kubectl => ./staging/src/k8s.io/kubectl
	example.com/x => example.com/y v1.0.0
)

replace k8s.io/kms => ./staging/src/k8s.io/kms
`), 0o644))
	mods, err := stagingModules(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"k8s.io/api", "k8s.io/kubectl", "k8s.io/kms"}, mods)

	require.NoError(t, os.WriteFile(p, []byte("module x\n"), 0o644))
	_, err = stagingModules(p)
	require.ErrorContains(t, err, "no replace into ./staging/src")
}

func TestKubeVersionLDFlags(t *testing.T) {
	ld := kubeVersionLDFlags(V1_35_4, "2026-04-15T18:01:22Z")
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		for _, kv := range []string{"gitVersion=v1.35.4", "gitMajor=1", "gitMinor=35", "gitTreeState=clean", "buildDate=2026-04-15T18:01:22Z"} {
			assert.Contains(t, ld, "-X "+pkg+"."+kv)
		}
	}
	assert.True(t, strings.HasPrefix(ld, "-s -w "))
}

func TestGoMod(t *testing.T) {
	b := goBuild{Require: []string{"a.example/m v1.0.0"}, Replace: []string{"k8s.io/api => k8s.io/api v0.35.4"}}
	assert.Equal(t, `module cargoship.test/k8sbuild

go 1.26

require (
	a.example/m v1.0.0
)

replace (
	k8s.io/api => k8s.io/api v0.35.4
)
`, b.goMod("go1.26.8"))
}

func TestDebVersion(t *testing.T) {
	assert.Equal(t, "1.1.5+ds1-1+deb12u1", debVersion("/c/runc_1.1.5+ds1-1+deb12u1_amd64.deb"))
	assert.Equal(t, "1:2.5", debVersion("x_1%3a2.5_all.deb"))
	assert.Empty(t, debVersion("odd.deb"))
}

func TestImageFileName(t *testing.T) {
	specs := imageSpecs(V1_35_4, "/b", "/r")
	names := map[string]bool{}
	for _, s := range specs {
		names[imageFileName(s)] = true
	}
	assert.Len(t, names, len(specs))
	assert.True(t, names["coredns_v1.13.1.tar"])
	assert.True(t, names["etcd_3.6.6-0.tar"])
}
