package k8s

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubeadm says the pinned version.
func TestSlowBuildKubeadmVersion(t *testing.T) {
	for _, r := range pinnedReleases {
		t.Run(r.Kubernetes, func(t *testing.T) {
			a := built(t, r)
			assert.Equal(t, "v"+r.Kubernetes, output(t, a.Path("kubeadm"), "version", "-o", "short"))
		})
	}
}

// The images built are exactly the ones kubeadm of the release lists with
// the ClusterConfiguration the release gives (its etcd and CoreDNS tags).
func TestSlowBuildImagesAreKubeadms(t *testing.T) {
	for _, r := range pinnedReleases {
		t.Run(r.Kubernetes, func(t *testing.T) {
			a := built(t, r)
			cfg := filepath.Join(t.TempDir(), "kubeadm.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(r.KubeadmClusterConfiguration()), 0o644))
			listed := strings.Fields(output(t, a.Path("kubeadm"), "config", "images", "list", "--config", cfg))
			// Without the config: the release's tags are kubeadm's defaults.
			defaults := strings.Fields(output(t, a.Path("kubeadm"), "config", "images", "list", "--kubernetes-version", "v"+r.Kubernetes))
			refs := a.ImageRefs()
			assert.Equal(t, refs, listed)
			assert.Equal(t, r.ImageRefs(), refs)
			sort.Strings(listed)
			sort.Strings(defaults)
			assert.Equal(t, listed, defaults, "the pinned etcd and CoreDNS tags are kubeadm's defaults")
			for _, img := range a.Images {
				assert.FileExists(t, img.Tarball)
				assert.True(t, strings.HasPrefix(img.Digest, "sha256:"), img.Digest)
			}
		})
	}
}

// versionChecks are how each binary is asked its version, and what the
// answer holds.
func versionChecks(r Release) map[string]struct {
	args []string
	want string
} {
	type check = struct {
		args []string
		want string
	}
	kube := "v" + r.Kubernetes
	return map[string]check{
		"kubeadm":                 {[]string{"version"}, `GitVersion:"` + kube + `"`},
		"kubelet":                 {[]string{"--version"}, "Kubernetes " + kube},
		"kubectl":                 {[]string{"version", "--client"}, "Client Version: " + kube},
		"kube-apiserver":          {[]string{"--version"}, "Kubernetes " + kube},
		"kube-controller-manager": {[]string{"--version"}, "Kubernetes " + kube},
		"kube-scheduler":          {[]string{"--version"}, "Kubernetes " + kube},
		"kube-proxy":              {[]string{"--version"}, "Kubernetes " + kube},
		"etcd":                    {[]string{"--version"}, "etcd Version: " + r.Etcd},
		"etcdctl":                 {[]string{"version"}, "etcdctl version: " + r.Etcd},
		"coredns":                 {[]string{"-version"}, "CoreDNS-" + r.CoreDNS},
		"containerd":              {[]string{"--version"}, "v" + r.Containerd},
		"ctr":                     {[]string{"--version"}, "v" + r.Containerd},
		"containerd-shim-runc-v2": {[]string{"-v"}, "v" + r.Containerd},
		"runc":                    {[]string{"--version"}, "runc version"},
		"pause":                   {[]string{"-v"}, "v" + r.Pause},
	}
}

// Every binary runs here and answers its version.
func TestSlowBuildBinariesVersion(t *testing.T) {
	for _, r := range pinnedReleases {
		t.Run(r.Kubernetes, func(t *testing.T) {
			a := built(t, r)
			checks := versionChecks(r)
			require.Len(t, checks, len(Binaries()))
			for _, b := range Binaries() {
				c, ok := checks[b]
				require.True(t, ok, b)
				assert.Contains(t, output(t, a.Path(b), c.args...), c.want, b)
			}
			for _, plugin := range sortedKeys(CNIPlugins) {
				// A CNI plugin run with no CNI_COMMAND says what it is.
				out := output(t, filepath.Join(a.CNIDir, plugin))
				assert.Contains(t, out, "CNI "+plugin+" plugin v"+r.CNIPlugins, plugin)
			}
		})
	}
}
