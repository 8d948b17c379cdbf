package k8s

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// baseFiles are what a distroless base has and a Go binary may look for:
// the users and groups root, nobody and nonroot, name resolution from
// files then DNS, and a /tmp.
var baseFiles = map[string]string{
	"etc/passwd":        "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
	"etc/group":         "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n",
	"etc/nsswitch.conf": "hosts: files dns\n",
}

// baseLayer is the layer every image starts from.
func baseLayer(mtime time.Time) (v1.Layer, error) {
	l := newLayerTar(mtime)
	l.dir("etc", 0o755)
	for _, p := range sortedKeys(baseFiles) {
		l.file(p, 0o644, []byte(baseFiles[p]))
	}
	l.dir("root", 0o700)
	l.dir("tmp", 0o1777)
	l.dir("var/run", 0o755)
	return l.layer()
}

// rootfsSkip leaves documentation out of a Debian tree.
func rootfsSkip(rel string) bool {
	for _, p := range []string{"usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian", "usr/share/bug"} {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// buildImage assembles one image: the base layer, the spec's tree if it
// has one, and its files; every timestamp is created.
func buildImage(s imageSpec, created time.Time) (v1.Image, error) {
	base, err := baseLayer(created)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	layers := []v1.Layer{base}
	if s.Rootfs != "" {
		l := newLayerTar(created)
		l.tree(s.Rootfs, rootfsSkip)
		tree, err := l.layer()
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", s.Ref(), err)
		}
		layers = append(layers, tree)
	}
	files := newLayerTar(created)
	for _, f := range s.Files {
		files.copyFile(f.Path, 0o755, f.Src)
	}
	top, err := files.layer()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	layers = append(layers, top)

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	adds := make([]mutate.Addendum, len(layers))
	for i, l := range layers {
		adds[i] = mutate.Addendum{Layer: l, MediaType: types.OCILayer, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "cargoship test/k8s"}}
	}
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: created}
	cf.Config.Entrypoint = s.Entrypoint
	cf.Config.Env = []string{"PATH=" + imagePath}
	cf.Config.User = s.User
	cf.Config.WorkingDir = "/"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	return img, nil
}

// writeImage writes img as a docker-archive tarball (what `ctr images
// import` and cargoship's image archive read) and returns its manifest
// digest.
func writeImage(s imageSpec, img v1.Image, path string) (string, error) {
	tag, err := name.NewTag(s.Ref(), name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return "", fmt.Errorf("image %s: write %s: %w", s.Ref(), path, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("image %s: %w", s.Ref(), err)
	}
	return d.String(), nil
}
