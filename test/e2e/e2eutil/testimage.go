package e2eutil

import (
	"archive/tar"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
)

// ImageHost is the registry the test package's image is named under. It
// is not the in-process registry's loopback address, whose port changes
// every run: a reference with that port in it would end up in the image
// archive's tags, and two test packages built by two runs would differ
// (docs/e2e.md, "The test package is reproducible"). create reaches the
// in-process registry through registryTransport instead. .invalid never
// resolves, so nothing can pull it from elsewhere.
const ImageHost = "registry.e2e.cargoship.invalid"

// ImageRef is the test package's image.
const ImageRef = ImageHost + "/e2e/pause:1.0"

// imageSeed seeds the test image's bytes: fixed, so the image (and its
// digest) is the same in every run.
var imageSeed = [32]byte{'c', 'a', 'r', 'g', 'o', 's', 'h', 'i', 'p', '-', 'e', '2', 'e'}

// testImage is a linux/amd64 image of layers layers, each one file of
// layerSize bytes drawn from a seeded generator, in a tar with fixed
// headers: incompressible like a real image, and identical every run.
func testImage(layerSize, layers int) (v1.Image, error) {
	rng := rand.NewChaCha8(imageSeed)
	var ls []v1.Layer
	for i := range layers {
		body := make([]byte, layerSize)
		_, _ = rng.Read(body) // ChaCha8's Read never fails
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		hdr := &tar.Header{Name: fmt.Sprintf("layer-%d", i), Mode: 0o644, Size: int64(layerSize), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
		if err := tw.Close(); err != nil {
			return nil, err
		}
		ls = append(ls, static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer))
	}
	return imagetest.PlatformImage("amd64", ls...)
}

// serveTestImage serves the test image from an in-process registry and
// returns a transport that sends requests for ImageHost to it; stop ends
// the registry.
func serveTestImage() (http.RoundTripper, func(), error) {
	img, err := testImage(32<<10, 2)
	if err != nil {
		return nil, nil, fmt.Errorf("building the test image: %w", err)
	}
	reg := imagetest.NewRegistry()
	if _, err := reg.Push("e2e/pause:1.0", img); err != nil {
		reg.Close()
		return nil, nil, err
	}
	return RedirectRegistries([]string{ImageHost}, reg.Host), reg.Close, nil
}

// RedirectRegistries is a transport that sends every request for the
// registries from to the registry at to (an in-process one, over plain
// HTTP: it listens on loopback only), and any other request on: a package
// whose images are named under registry.k8s.io is created from images
// built here, and nothing reaches the real registry.
func RedirectRegistries(from []string, to string) http.RoundTripper {
	r := &redirect{from: map[string]bool{}, to: to, next: http.DefaultTransport}
	for _, h := range from {
		r.from[h] = true
	}
	return r
}

// redirect sends every request for some hosts to another.
type redirect struct {
	from map[string]bool
	to   string
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if !r.from[req.URL.Host] {
		return r.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = "http", r.to, r.to
	return r.next.RoundTrip(req)
}
