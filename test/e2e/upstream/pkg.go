package upstream

import (
	"context"
	"embed"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/k8s"
)

//go:embed files
var unitFiles embed.FS

// upstreamPackage is one package the walk applies.
type upstreamPackage struct {
	Path    string
	Release k8s.Release
}

// buildTimeout bounds a build of the binaries from source: about ten
// minutes on two cores the first time, seconds from the cache.
const buildTimeout = 45 * time.Minute

// hostBinaries are the build's binaries every node takes, in /usr/bin as
// the kubeadm, kubelet, kubectl and containerd packages put them.
var hostBinaries = []string{"kubeadm", "kubelet", "kubectl", "containerd", "ctr", "containerd-shim-runc-v2", "runc"}

// unitTargets places the units as the packages would.
var unitTargets = map[string]string{
	"kubelet.service":    "/etc/systemd/system/kubelet.service",
	"10-kubeadm.conf":    "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
	"containerd.service": "/etc/systemd/system/containerd.service",
	// A drop-in over cargoship's containerd config (docs/e2e.md, "The
	// upstream walk").
	"10-cargoship-fleet.toml": "/etc/containerd/conf.d/10-cargoship-fleet.toml",
	"resolv.conf":             resolvConf,
}

// resolvConf is the kubelet's resolvConf (definition.go).
const resolvConf = "/etc/cargoship-e2e/resolv.conf"

// buildPackage creates the walk's package for a release with cargoship's
// own create: binaries and images from test/k8s, the pod network and the
// probe from this suite, images pulled from an in-process registry.
func buildPackage(t *testing.T, r k8s.Release) *upstreamPackage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	start := time.Now()
	art, err := k8s.Build(ctx, r)
	if err != nil {
		t.Fatalf("building Kubernetes %s from source: %v", r.Kubernetes, err)
	}
	t.Logf("Kubernetes %s binaries and images ready in %s (%s)", r.Kubernetes, time.Since(start).Round(time.Second), art.Dir)

	dir := t.TempDir()
	for _, d := range []string{"layout", "files"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := definitionInput{Release: r, Manifest: podnetManifestName}
	for _, b := range hostBinaries {
		in.Files = append(in.Files, placed{Source: linkInto(t, dir, art.Path(b), "layout/"+b), Target: "/usr/bin/" + b, Executable: true})
	}
	for _, p := range slices.Sorted(maps.Keys(k8s.CNIPlugins)) {
		in.Files = append(in.Files, placed{Source: linkInto(t, dir, filepath.Join(art.CNIDir, p), "layout/cni/"+p), Target: "/opt/cni/bin/" + p, Executable: true})
	}
	for _, name := range slices.Sorted(maps.Keys(unitTargets)) {
		target := unitTargets[name]
		b, err := unitFiles.ReadFile("files/" + name)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "layout", name), b)
		in.Files = append(in.Files, placed{Source: "layout/" + name, Target: target})
	}

	reg := imagetest.NewRegistry()
	t.Cleanup(reg.Close)
	for _, img := range art.Images {
		i, err := tarball.ImageFromPath(img.Tarball, nil)
		if err != nil {
			t.Fatalf("reading %s: %v", img.Tarball, err)
		}
		pushAs(t, reg, img.Ref, i)
		in.Images = append(in.Images, img.Ref)
	}
	images, manifest := suiteImages(ctx, t, dir)
	for _, w := range images {
		pushAs(t, reg, w.ref, w.img)
		in.Images = append(in.Images, w.ref)
	}
	writeFile(t, filepath.Join(dir, "files", podnetManifestName), manifest)

	def, err := renderDefinition(in)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "distro.yaml"), def)
	res, err := pkgfile.Create(ctx, pkgfile.CreateOptions{
		Definition: dir, OutputDir: filepath.Join(dir, "out"), InsecureRegistry: true, TmpDir: dir,
		BuildTime: e2eutil.BuildTime, RegistryTransport: e2eutil.RedirectRegistries(imageHosts(in.Images), reg.Host),
	})
	if err != nil {
		t.Fatalf("creating the upstream %s package: %v", r.Kubernetes, err)
	}
	t.Logf("upstream package %s: %s", r.Kubernetes, res.Path)
	return &upstreamPackage{Path: res.Path, Release: r}
}

// pushAs pushes img to the in-process registry under ref's repository
// and tag: create asks for ref's registry, which RedirectRegistries sends
// there.
func pushAs(t *testing.T, reg *imagetest.Registry, ref string, img v1.Image) {
	t.Helper()
	_, repoTag, ok := strings.Cut(ref, "/")
	if !ok {
		t.Fatalf("image %s names no registry", ref)
	}
	if _, err := reg.Push(repoTag, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
}

// imageHosts are the registries the images are named under.
func imageHosts(refs []string) []string {
	seen := map[string]bool{}
	var hosts []string
	for _, r := range refs {
		h, _, _ := strings.Cut(r, "/")
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// linkInto hard-links (or copies) a built file into the definition
// directory: create takes sources relative to the definition.
func linkInto(t *testing.T, dir, src, rel string) string {
	t.Helper()
	dst := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(src, dst); err == nil {
		return rel
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return rel
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
