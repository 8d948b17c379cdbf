package k8s

import (
	"fmt"
	"sort"
	"strings"
)

// Release pins every version one build uses. The Kubernetes-side pins are
// the ones kubeadm of that release deploys (its constants package; see
// docs/reference/kubernetes-build.md), so a cluster from this build needs no
// image tag overrides unless EtcdImageTag or CoreDNSImageTag differ from
// kubeadm's defaults.
type Release struct {
	// Kubernetes is the release, without the v: "1.35.4".
	Kubernetes string
	// Etcd is the go.etcd.io/etcd module version, without the v.
	Etcd string
	// EtcdImageTag is the tag of the etcd image: kubeadm's
	// constants.DefaultEtcdVersion ("3.6.6-0").
	EtcdImageTag string
	// CoreDNS is the github.com/coredns/coredns version, without the v.
	CoreDNS string
	// CoreDNSImageTag is the tag of the CoreDNS image: kubeadm's
	// constants.CoreDNSVersion ("v1.13.1").
	CoreDNSImageTag string
	// Pause is the pause image's tag: kubeadm's constants.PauseVersion.
	Pause string
	// CNIPlugins is the github.com/containernetworking/plugins version.
	CNIPlugins string
	// Containerd is the github.com/containerd/containerd/v2 version.
	Containerd string
}

// The releases this package pins; the upgrade walk goes from the older to
// the newer.
var (
	// V1_35_4 is Kubernetes 1.35.4 with what its kubeadm deploys.
	V1_35_4 = Release{
		Kubernetes:      "1.35.4",
		Etcd:            "3.6.6",
		EtcdImageTag:    "3.6.6-0",
		CoreDNS:         "1.13.1",
		CoreDNSImageTag: "v1.13.1",
		Pause:           "3.10.1",
		CNIPlugins:      "1.10.0",
		Containerd:      "2.2.9",
	}
	// V1_34_4 is Kubernetes 1.34.4 with what its kubeadm deploys.
	V1_34_4 = Release{
		Kubernetes:      "1.34.4",
		Etcd:            "3.6.5",
		EtcdImageTag:    "3.6.5-0",
		CoreDNS:         "1.12.1",
		CoreDNSImageTag: "v1.12.1",
		Pause:           "3.10.1",
		CNIPlugins:      "1.10.0",
		Containerd:      "2.2.9",
	}
)

// Releases are the pinned releases by Kubernetes version.
var Releases = map[string]Release{
	V1_35_4.Kubernetes: V1_35_4,
	V1_34_4.Kubernetes: V1_34_4,
}

// Lookup returns the pinned release of a Kubernetes version ("1.35.4" or
// "v1.35.4").
func Lookup(version string) (Release, error) {
	r, ok := Releases[strings.TrimPrefix(version, "v")]
	if !ok {
		known := make([]string, 0, len(Releases))
		for v := range Releases {
			known = append(known, v)
		}
		sort.Strings(known)
		return Release{}, fmt.Errorf("no pinned Kubernetes release %q (pinned: %s)", version, strings.Join(known, ", "))
	}
	return r, nil
}

// Minor is the Kubernetes minor version: 35 for 1.35.4.
func (r Release) Minor() string {
	parts := strings.SplitN(r.Kubernetes, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// Major is the Kubernetes major version: 1.
func (r Release) Major() string {
	return strings.SplitN(r.Kubernetes, ".", 2)[0]
}

// StagingVersion is the version the staging modules (k8s.io/api and the
// others) are released at for this Kubernetes release: v0.35.4.
func (r Release) StagingVersion() string {
	return "v0." + strings.SplitN(r.Kubernetes, ".", 2)[1]
}

// KubeadmClusterConfiguration is the kubeadm ClusterConfiguration
// (v1beta4) a cluster from this build uses: the Kubernetes version and the
// etcd and CoreDNS image tags of the images built here.
func (r Release) KubeadmClusterConfiguration() string {
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v%s
etcd:
  local:
    imageTag: %q
dns:
  imageTag: %q
`, r.Kubernetes, r.EtcdImageTag, r.CoreDNSImageTag)
}
