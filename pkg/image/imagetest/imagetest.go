// Package imagetest serves an OCI registry inside the process, for tests,
// the demo and benchmarks: go-containerregistry's registry behind an
// httptest server on loopback, counting the blob downloads it serves, with
// helpers that push images for a platform. Nothing leaves the machine.
package imagetest

import (
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is an OCI registry served on loopback. Close stops it.
type Registry struct {
	*httptest.Server
	// Host is the registry's host:port, what its references start with.
	Host string

	mu       sync.Mutex
	blobGets map[string]int // digest -> GET count
	fault    func(http.ResponseWriter, *http.Request) bool
}

// NewRegistry starts an empty registry; the caller closes it (in a test,
// t.Cleanup(reg.Close)).
func NewRegistry() *Registry {
	reg := &Registry{blobGets: map[string]int{}}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	reg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg.mu.Lock()
		fault := reg.fault
		if r.Method == http.MethodGet {
			if _, dgst, ok := strings.Cut(r.URL.Path, "/blobs/"); ok {
				reg.blobGets[dgst]++
			}
		}
		reg.mu.Unlock()
		if fault != nil && fault(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	reg.Host = strings.TrimPrefix(reg.URL, "http://")
	return reg
}

// ServeRandom starts a registry holding one random image for linux/arch
// (see PushRandom) as repoTag, and returns the image's reference and a
// function that stops the registry.
func ServeRandom(repoTag, arch string, layerSize int64, layers int) (ref string, stop func(), err error) {
	reg := NewRegistry()
	if ref, err = reg.PushRandom(repoTag, arch, layerSize, layers); err != nil {
		reg.Close()
		return "", nil, err
	}
	return ref, reg.Close, nil
}

// SetFault puts f in front of the registry: it sees every request and
// answers it itself when it returns true. nil removes it.
func (reg *Registry) SetFault(f func(w http.ResponseWriter, r *http.Request) bool) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.fault = f
}

// Ref is the reference of repoTag ("demo/app:1.0") in this registry.
func (reg *Registry) Ref(repoTag string) string { return reg.Host + "/" + repoTag }

// BlobGets is the number of blob downloads asked for so far.
func (reg *Registry) BlobGets() int {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	n := 0
	for _, c := range reg.blobGets {
		n += c
	}
	return n
}

// BlobGetCounts is the number of downloads asked for per blob digest.
func (reg *Registry) BlobGetCounts() map[string]int {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return maps.Clone(reg.blobGets)
}

// Push pushes img (no index) as repoTag and returns its reference.
func (reg *Registry) Push(repoTag string, img v1.Image) (string, error) {
	ref := reg.Ref(repoTag)
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	if err := remote.Write(r, img); err != nil {
		return "", fmt.Errorf("pushing %s to the in-process registry: %w", ref, err)
	}
	return ref, nil
}

// PushRandom pushes a random image for linux/arch with layers layers of
// layerSize bytes as repoTag, and returns its reference.
func (reg *Registry) PushRandom(repoTag, arch string, layerSize int64, layers int) (string, error) {
	img, err := RandomImage(arch, layerSize, layers)
	if err != nil {
		return "", err
	}
	return reg.Push(repoTag, img)
}

// PushIndex pushes an index of images[arch], each for linux/arch, in
// architecture order, then extra entries (an attestation, say), as repoTag,
// and returns its reference.
func (reg *Registry) PushIndex(repoTag string, images map[string]v1.Image, extra ...mutate.IndexAddendum) (string, error) {
	idx := v1.ImageIndex(empty.Index)
	for _, arch := range slices.Sorted(maps.Keys(images)) {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        images[arch],
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}},
		})
	}
	idx = mutate.AppendManifests(idx, extra...)
	ref := reg.Ref(repoTag)
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(r, idx); err != nil {
		return "", fmt.Errorf("pushing %s to the in-process registry: %w", ref, err)
	}
	return ref, nil
}

// RandomImage is a random image of layers layers of layerSize bytes whose
// config names linux/arch: a random image has no platform, and cargoship
// picks images by architecture.
func RandomImage(arch string, layerSize int64, layers int) (v1.Image, error) {
	img, err := random.Image(layerSize, int64(layers))
	if err != nil {
		return nil, err
	}
	return ForPlatform(img, arch)
}

// PlatformImage is an image of layers whose config names linux/arch.
func PlatformImage(arch string, layers ...v1.Layer) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	return ForPlatform(img, arch)
}

// ForPlatform is img with its config naming linux/arch.
func ForPlatform(img v1.Image, arch string) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	return mutate.ConfigFile(img, cf)
}
