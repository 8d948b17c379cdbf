package main

import (
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// startRegistry serves an OCI registry inside this process on loopback and
// pushes one small random image to it, so `cargoship create` pulls an image
// the way it would from a real registry, with no network. It returns the
// image reference and a function that stops the registry.
func startRegistry() (string, func(), error) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	ref := strings.TrimPrefix(srv.URL, "http://") + "/demo/pause:1.0"
	img, err := random.Image(32<<10, 2)
	if err != nil {
		srv.Close()
		return "", nil, err
	}
	// A random image has no platform; create picks images by architecture.
	cf, err := img.ConfigFile()
	if err != nil {
		srv.Close()
		return "", nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		srv.Close()
		return "", nil, err
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		srv.Close()
		return "", nil, err
	}
	if err := remote.Write(r, img); err != nil {
		srv.Close()
		return "", nil, fmt.Errorf("pushing %s to the in-process registry: %w", ref, err)
	}
	return ref, srv.Close, nil
}
