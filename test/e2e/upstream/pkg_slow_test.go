package upstream

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/k8s"
)

// TestSlowUpstreamPackageCarriesWhatKubeadmDeploys: cargoship's create
// turns the upstream definition into a package that carries every image
// kubeadm of the release deploys (so no node pulls one), the pod
// network's and the probe's, and the binaries and units every host's
// binary route places.
func TestSlowUpstreamPackageCarriesWhatKubeadmDeploys(t *testing.T) {
	testtier.Slow(t, "builds Kubernetes from source the first time (minutes), then a package of ~300 MiB")
	p := buildPackage(t, k8s.V1_35_4)
	pkg, err := pkgfile.Open(p.Path, pkgfile.OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer func() { _ = pkg.Close() }()

	var images []string
	for _, e := range pkg.EntriesOf(pkgfile.KindImages) {
		for _, i := range e.Images {
			images = append(images, i.Ref)
		}
	}
	for _, want := range k8s.V1_35_4.ImageRefs() {
		assert.Contains(t, images, want, "kubeadm deploys it, so the package carries it")
	}
	assert.True(t, slices.Contains(images, probeImage), "the probe's image: %v", images)

	d := pkg.Distro
	var targets []string
	for _, f := range d.Spec.Config.OS.Files {
		targets = append(targets, f.Target)
	}
	for _, want := range []string{"/usr/bin/kubeadm", "/usr/bin/kubelet", "/usr/bin/containerd", "/usr/bin/runc", "/opt/cni/bin/bridge", "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"} {
		assert.Contains(t, targets, want)
	}
}
