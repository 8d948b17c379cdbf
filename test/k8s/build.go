package k8s

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// recipeVersion changes whenever what a build does changes, so a cache of
// an older recipe is not taken for this one's.
const recipeVersion = 1

// Artifacts are what a build made, all under Dir.
type Artifacts struct {
	Release Release
	// Dir is the build's directory in the cache.
	Dir string
	// BinDir holds every binary: the Kubernetes commands, etcd, etcdctl,
	// coredns, containerd, ctr, containerd-shim-runc-v2, runc and pause.
	BinDir string
	// CNIDir holds the CNI plugins (bridge, host-local, loopback,
	// portmap), as /opt/cni/bin does on a node.
	CNIDir string
	// Images are the images kubeadm deploys, in `kubeadm config images
	// list` order.
	Images []Image
	// Versions says what went in: each part's version, runc's and the
	// kube-proxy image's Debian packages as downloaded.
	Versions []string
}

// Image is one built image.
type Image struct {
	// Name is kubeadm's name for it: kube-apiserver, etcd, coredns, pause.
	Name string
	// Ref is registry.k8s.io/<name>:<tag> as kubeadm expects it.
	Ref string
	// Digest is the image's manifest digest.
	Digest string
	// Tarball is a docker-archive of the image alone (ctr images import).
	Tarball string
}

// Binaries are the names in BinDir.
func Binaries() []string {
	return append(append([]string{}, KubeCommands...),
		"etcd", "etcdctl", "coredns", "containerd", "ctr", "containerd-shim-runc-v2", "runc", "pause")
}

// Path is a binary's path in BinDir.
func (a *Artifacts) Path(binary string) string { return filepath.Join(a.BinDir, binary) }

// ImageRefs are the built images' references.
func (a *Artifacts) ImageRefs() []string {
	refs := make([]string, len(a.Images))
	for i, img := range a.Images {
		refs[i] = img.Ref
	}
	return refs
}

// Key is the cache key of a build of r with a Go toolchain: a hash of the
// release, the toolchain, the recipe and what it takes from Debian.
func (r Release) Key(toolchain string) string {
	pause := sha256.Sum256(pauseSource)
	b, _ := json.Marshal(struct {
		Recipe    int
		Release   Release
		Toolchain string
		Pause     string
		Debs      []string
		Tags      [][]string
	}{recipeVersion, r, toolchain, hex.EncodeToString(pause[:]), append([]string{runcDeb}, kubeProxyDebs...),
		[][]string{kubeBuildTags, containerdTags}})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}

// part is one step of a build: it builds into its own directory under
// parts/ and is stamped when done, so a build cut short redoes only the
// parts it had not finished.
type part struct {
	name  string
	build func(ctx context.Context, out string) (notes []string, err error)
}

// Build builds release r, or finds it in the cache (CacheRoot). Two
// processes building the same release take turns: the second waits for
// the first's lock and then finds its build.
func Build(ctx context.Context, r Release) (*Artifacts, error) {
	toolchain, err := toolchainVersion(ctx)
	if err != nil {
		return nil, err
	}
	root, err := CacheRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "v"+r.Kubernetes+"-"+r.Key(toolchain))
	unlock, err := lock(ctx, dir+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if complete(dir) {
		a, err := readArtifacts(dir)
		if err == nil {
			slog.Info("kubernetes build found in the cache", "version", r.Kubernetes, "dir", dir)
			return a, nil
		}
		slog.Info("kubernetes build in the cache unreadable; building again", "dir", dir, "err", err)
	}
	return build(ctx, r, dir, debCache{dir: filepath.Join(root, "debs")})
}

// build runs every part not yet done, then lays out bin/ and cni/, builds
// the images and stamps dir.
func build(ctx context.Context, r Release, dir string, debs debCache) (*Artifacts, error) {
	start := time.Now()
	src := filepath.Join(dir, "src")
	parts := []part{
		{"kubernetes", func(ctx context.Context, out string) ([]string, error) {
			return []string{"kubernetes v" + r.Kubernetes}, buildKube(ctx, r, src, out)
		}},
		{"etcd", func(ctx context.Context, out string) ([]string, error) {
			return []string{"etcd v" + r.Etcd}, buildEtcd(ctx, r, src, out)
		}},
		{"coredns", func(ctx context.Context, out string) ([]string, error) {
			return []string{"coredns v" + r.CoreDNS}, buildCoreDNS(ctx, r, src, out)
		}},
		{"containerd", func(ctx context.Context, out string) ([]string, error) {
			return []string{"containerd v" + r.Containerd}, buildContainerd(ctx, r, src, out)
		}},
		{"cni", func(ctx context.Context, out string) ([]string, error) {
			return []string{"cni-plugins v" + r.CNIPlugins}, buildCNI(ctx, r, src, out)
		}},
		{"pause", func(ctx context.Context, out string) ([]string, error) {
			return []string{"pause " + r.Pause + " (cmd/pause)"}, buildPause(ctx, r, src, out)
		}},
		{"runc", func(ctx context.Context, out string) ([]string, error) {
			v, err := fetchRunc(ctx, debs, out)
			return []string{"runc " + v + " (Debian package)"}, err
		}},
		{"kube-proxy-rootfs", func(ctx context.Context, out string) ([]string, error) {
			return buildProxyRootfs(ctx, debs, out)
		}},
	}
	a := &Artifacts{Release: r, Dir: dir, BinDir: filepath.Join(dir, "bin"), CNIDir: filepath.Join(dir, "cni")}
	partDirs := map[string]string{}
	for _, p := range parts {
		out := filepath.Join(dir, "parts", p.name)
		partDirs[p.name] = out
		notes, err := runPart(ctx, p, out)
		if err != nil {
			return nil, err
		}
		a.Versions = append(a.Versions, notes...)
	}
	if err := layout(a, partDirs); err != nil {
		return nil, err
	}
	t := time.Now()
	created, err := releaseTime(ctx, r)
	if err != nil {
		return nil, err
	}
	a.Images, err = buildImages(r, a.BinDir, filepath.Join(partDirs["kube-proxy-rootfs"], "rootfs"), created, filepath.Join(dir, "images"))
	if err != nil {
		return nil, err
	}
	slog.Info("kubernetes build part done", "part", "images", "took", since(t))
	if err := writeArtifacts(a); err != nil {
		return nil, err
	}
	slog.Info("kubernetes build done", "version", r.Kubernetes, "dir", dir, "took", since(start))
	return a, nil
}

// runPart builds p into out unless out is stamped, and returns its notes
// (the stamp's lines).
func runPart(ctx context.Context, p part, out string) ([]string, error) {
	if complete(out) {
		b, err := os.ReadFile(filepath.Join(out, stampName))
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.name, err)
		}
		slog.Info("kubernetes build part cached", "part", p.name)
		return strings.Split(strings.TrimSpace(string(b)), "\n"), nil
	}
	if err := fresh(out); err != nil {
		return nil, err
	}
	t := time.Now()
	slog.Info("kubernetes build part starting", "part", p.name, "dir", out)
	notes, err := p.build(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", p.name, err)
	}
	if err := markComplete(out, []byte(strings.Join(notes, "\n")+"\n")); err != nil {
		return nil, err
	}
	slog.Info("kubernetes build part done", "part", p.name, "took", since(t))
	return notes, nil
}

// since is a duration rounded for a log line.
func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

// layout links every binary from the parts into bin/ and the CNI plugins
// into cni/.
func layout(a *Artifacts, partDirs map[string]string) error {
	for _, d := range []string{a.BinDir, a.CNIDir} {
		if err := fresh(d); err != nil {
			return err
		}
	}
	from := map[string]string{}
	for _, c := range KubeCommands {
		from[c] = "kubernetes"
	}
	for bin, p := range map[string]string{
		"etcd": "etcd", "etcdctl": "etcd", "coredns": "coredns", "containerd": "containerd", "ctr": "containerd",
		"containerd-shim-runc-v2": "containerd", "runc": "runc", "pause": "pause",
	} {
		from[bin] = p
	}
	for _, bin := range Binaries() {
		if err := os.Link(filepath.Join(partDirs[from[bin]], bin), a.Path(bin)); err != nil {
			return fmt.Errorf("lay out %s: %w", bin, err)
		}
	}
	for _, plugin := range sortedKeys(CNIPlugins) {
		if err := os.Link(filepath.Join(partDirs["cni"], plugin), filepath.Join(a.CNIDir, plugin)); err != nil {
			return fmt.Errorf("lay out CNI plugin %s: %w", plugin, err)
		}
	}
	return nil
}

// releaseTime is the Kubernetes release's commit time, from the module
// proxy: every image's timestamp, so images are the same bytes each build.
func releaseTime(ctx context.Context, r Release) (time.Time, error) {
	mod, err := downloadModule(ctx, "k8s.io/kubernetes", "v"+r.Kubernetes)
	if err != nil {
		return time.Time{}, err
	}
	return mod.Time, nil
}

// buildImages builds every image of r into dir.
func buildImages(r Release, bin, proxyRootfs string, created time.Time, dir string) ([]Image, error) {
	if err := fresh(dir); err != nil {
		return nil, err
	}
	var images []Image
	for _, s := range imageSpecs(r, bin, proxyRootfs) {
		img, err := buildImage(s, created)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, imageFileName(s))
		digest, err := writeImage(s, img, path)
		if err != nil {
			return nil, err
		}
		images = append(images, Image{Name: s.Name, Ref: s.Ref(), Digest: digest, Tarball: path})
	}
	return images, nil
}

// artifactsFile is the build's record in its stamp.
func writeArtifacts(a *Artifacts) error {
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("record build: %w", err)
	}
	return markComplete(a.Dir, append(b, '\n'))
}

// readArtifacts reads a finished build's record.
func readArtifacts(dir string) (*Artifacts, error) {
	b, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil {
		return nil, fmt.Errorf("read build record: %w", err)
	}
	var a Artifacts
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("read build record %s: %w", dir, err)
	}
	if a.Dir != dir {
		return nil, fmt.Errorf("build record %s names another directory, %s", dir, a.Dir)
	}
	return &a, nil
}
