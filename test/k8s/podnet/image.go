package podnet

import (
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/colonel-byte/cargoship/test/k8s"
)

const (
	// BinaryPath is where the image holds the daemon, its entrypoint.
	BinaryPath = "/podnet"
	// ImageName is the repository Ref tags the image in.
	ImageName = "cargoship.test/podnet"
)

// imageTime is every timestamp in the image (the Unix epoch), so the same
// binary gives the same digest.
var imageTime = time.Unix(0, 0).UTC()

// Image is podnet's image for linux/amd64: one layer with the static
// binary at BinaryPath (root-owned, 0755), which is the entrypoint. It
// needs nothing else: no shell, no libc, no CA bundle (the cluster's CA
// comes with the ServiceAccount).
func Image(binaryPath string) (v1.Image, error) {
	img, err := k8s.BinaryImage(binaryPath, BinaryPath, "cargoship test/k8s/podnet", imageTime)
	if err != nil {
		return nil, fmt.Errorf("podnet image: %w", err)
	}
	return img, nil
}

// Ref is the reference to tag img with: ImageName, tagged with the start
// of its digest, so a changed binary is a new tag and the DaemonSet rolls.
func Ref(img v1.Image) (string, error) {
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("podnet image: %w", err)
	}
	return ImageName + ":" + d.Hex[:12], nil
}

// WriteTarball writes img tagged ref as a docker-archive tarball at path,
// what `ctr images import` reads.
func WriteTarball(img v1.Image, ref, path string) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("podnet image %s: %w", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("podnet image %s: write %s: %w", ref, path, err)
	}
	return nil
}
