package image

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeRef(t *testing.T) {
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for in, want := range map[string]string{
		"busybox":                                   "docker.io/library/busybox:latest",
		"busybox:1.36":                              "docker.io/library/busybox:1.36",
		"docker.io/rancher/mirrored-pause:3.6":      "docker.io/rancher/mirrored-pause:3.6",
		"index.docker.io/library/alpine:3":          "docker.io/library/alpine:3",
		"rancher/klipper-helm:v0.9.4-build20250113": "docker.io/rancher/klipper-helm:v0.9.4-build20250113",
		"registry.k8s.io/pause:3.10":                "registry.k8s.io/pause:3.10",
		"localhost:5000/team/app:1":                 "localhost:5000/team/app:1",
		"127.0.0.1:5000/app":                        "127.0.0.1:5000/app:latest",
		"quay.io/cilium/cilium@" + d:                "quay.io/cilium/cilium@" + d,
		"quay.io/cilium/cilium:v1.17.0@" + d:        "quay.io/cilium/cilium:v1.17.0@" + d,
		"registry.example:8443/a/b/c:1.0@" + d:      "registry.example:8443/a/b/c:1.0@" + d,
		"registry.example:8443/a/b/c@" + d:          "registry.example:8443/a/b/c@" + d,
	} {
		got, err := NormalizeRef(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "UPPER/case", "a:b:c", "repo@sha256:short"} {
		_, err := NormalizeRef(bad)
		assert.Error(t, err, bad)
	}
}
