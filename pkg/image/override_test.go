package image

import (
	"encoding/json"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRegistryOverrides(t *testing.T) {
	got, err := ParseRegistryOverrides([]string{
		"docker.io=mirror.internal:5000", " index.docker.io/rancher = mirror.internal:5000/rancher/ ", "quay.io=localhost:5000/quay",
	})
	require.NoError(t, err)
	assert.Equal(t, []RegistryOverride{
		{From: "docker.io", To: "mirror.internal:5000"},
		{From: "docker.io/rancher", To: "mirror.internal:5000/rancher"},
		{From: "quay.io", To: "localhost:5000/quay"},
	}, got)

	for item, want := range map[string]string{
		"docker.io":                             "want registry=replacement",
		"=mirror:5000":                          "want registry=replacement",
		"docker.io=":                            "want registry=replacement",
		"docker.io=https://mirror:5000":         "no scheme",
		"docker.io=mirror:5000/app:1.0":         "not a registry name",
		"docker.io=mirror":                      `"mirror" is not a registry host`,
		"docker.io=Mirror.internal/UPPER":       "not a registry name",
		"docker.io=mirror.internal@sha256:abcd": "no scheme, tag or digest",
	} {
		_, err := ParseRegistryOverrides([]string{item})
		require.ErrorContains(t, err, want, item)
		require.ErrorContains(t, err, item, "the error names the item")
	}
	_, err = ParseRegistryOverrides([]string{"docker.io=a.example", "index.docker.io=b.example"})
	require.ErrorContains(t, err, "docker.io is already overridden (docker.io=a.example)")
}

func TestRewritePicksTheLongestPrefixAtABoundary(t *testing.T) {
	ovs := []RegistryOverride{
		{From: "docker.io", To: "hub.mirror:5000"},
		{From: "docker.io/rancher", To: "rancher.mirror/r"},
		{From: "localhost", To: "other.mirror"},
		{From: "quay.io/app", To: "app.mirror"},
	}
	for ref, want := range map[string]string{
		"docker.io/library/busybox:latest":   "hub.mirror:5000/library/busybox:latest",
		"docker.io/rancher/pause:3.6":        "rancher.mirror/r/pause:3.6",
		"docker.io/ranchers/x:1":             "hub.mirror:5000/ranchers/x:1",
		"localhost:5000/x:1":                 "localhost:5000/x:1", // another registry, not "localhost"
		"localhost/x:1":                      "other.mirror/x:1",
		"quay.io/app:2":                      "app.mirror:2",
		"quay.io/app@sha256:" + hex64("a"):   "app.mirror@sha256:" + hex64("a"),
		"quay.io/apps:2":                     "quay.io/apps:2",
		"registry.k8s.io/pause:3.10":         "registry.k8s.io/pause:3.10",
		"docker.io.evil.example/rancher/x:1": "docker.io.evil.example/rancher/x:1",
	} {
		got, _ := rewrite(ref, ovs)
		assert.Equal(t, want, got, ref)
	}
}

func hex64(c string) string {
	s := ""
	for range 64 {
		s += c
	}
	return s
}

// An image named by a registry that does not resolve is pulled from the
// mirror the override names, and the archive, its digest index and the
// summary all keep the original name.
func TestWriteArchiveThroughARegistryOverrideKeepsTheOriginalName(t *testing.T) {
	fx := newFixture(t)
	const original = "registry.invalid/demo/app-a:1.0"
	ovs, err := ParseRegistryOverrides([]string{"registry.invalid=" + fx.reg.Host})
	require.NoError(t, err)
	for _, compression := range compressions {
		p := newPuller(t)
		p.Overrides = ovs
		b, sum := writeTo(t, p, []string{original}, "arm64", compression)
		want := expectedSummary(t, original, fx.images[fx.reg.Ref("demo/app-a:1.0")]["arm64"])
		assert.Equal(t, []ImageSummary{want}, sum.Images, compression)

		_, content := tarEntries(t, b, compression)
		var m tarball.Manifest
		require.NoError(t, json.Unmarshal(content["manifest.json"], &m))
		require.Len(t, m, 1)
		assert.Equal(t, []string{original}, m[0].RepoTags, "hosts import the image under its original name")
		var idx []indexEntry
		require.NoError(t, json.Unmarshal(content[IndexFileName], &idx))
		assert.Equal(t, []indexEntry{{Ref: original, Digest: want.Digest, Platform: "linux/arm64"}}, idx)
	}

	// Without the override the made-up registry is what it is: unreachable.
	_, err = newPuller(t).WriteArchive(t.Context(), &discard{}, []string{original}, "arm64", "none")
	require.ErrorContains(t, err, original)
}

// A missing image behind an override says which mirror was asked.
func TestRegistryOverrideErrorsNameTheMirror(t *testing.T) {
	fx := newFixture(t)
	p := newPuller(t)
	var err error
	p.Overrides, err = ParseRegistryOverrides([]string{"registry.invalid=" + fx.reg.Host})
	require.NoError(t, err)
	_, err = p.WriteArchive(t.Context(), &discard{}, []string{"registry.invalid/demo/absent:1.0"}, "amd64", "none")
	require.ErrorContains(t, err, "image registry.invalid/demo/absent:1.0 (linux/amd64)")
	require.ErrorContains(t, err, "registry override registry.invalid="+fx.reg.Host)
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
