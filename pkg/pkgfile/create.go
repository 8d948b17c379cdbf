package pkgfile

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/image"
	"github.com/colonel-byte/cargoship/pkg/version"
)

// DefaultConcurrency bounds parallel fetches when nothing else is said.
const DefaultConcurrency = 4

// CreateOptions say what to build and where.
type CreateOptions struct {
	// Definition is a distro.yaml or a directory holding one.
	Definition string
	// OutputDir receives the package; it is created if missing.
	OutputDir string
	// Architectures overrides the definition's architectures.
	Architectures []string
	// SigningKey, when set, signs manifest.yaml (manifest.sig).
	SigningKey ed25519.PrivateKey
	// Concurrency bounds parallel fetches and image pulls (0 = DefaultConcurrency).
	Concurrency int
	// InsecureRegistry allows registries served over plain HTTP.
	InsecureRegistry bool
	// RegistryOverrides pull images through mirrors; the package and the
	// hosts keep the original references, and build.registryOverrides
	// records the mirrors used.
	RegistryOverrides []image.RegistryOverride
	// SkipSBOM leaves the package's SBOM (SBOMName) out.
	SkipSBOM bool
	// CacheDir holds downloads (files/) and image blobs (images/) between
	// runs; "" uses no persistent cache (a temporary one).
	CacheDir string
	// TmpDir holds staged image archives while the package is written.
	TmpDir string
	// Log receives progress lines; nil discards.
	Log *slog.Logger
	// Progress shows downloads; nil shows none.
	Progress fetch.Progress
	// ActionOutput receives the output of onCreate actions; nil discards.
	ActionOutput io.Writer
	// BuildTime is written to build.timestamp; zero means now. Fixing it
	// (SOURCE_DATE_EPOCH) makes a package byte-for-byte reproducible.
	BuildTime time.Time
	// HTTPClient fetches files; nil is http.DefaultClient.
	HTTPClient *http.Client
	// RegistryTransport pulls images; nil is the default transport.
	RegistryTransport http.RoundTripper
	// Retries and Backoff tune download retries (0 = fetch's defaults).
	Retries int
	Backoff time.Duration
}

// CreateResult is what Create wrote.
type CreateResult struct {
	// Path is the package file.
	Path string
	// Size is its size in bytes.
	Size int64
	// Manifest is its manifest.yaml.
	Manifest *Manifest
}

// Create builds the package for a definition. The definition is loaded and
// checked before anything runs or downloads; on any failure nothing is
// left in OutputDir.
func Create(ctx context.Context, opts CreateOptions) (*CreateResult, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	defPath := v1alpha1.DistroPath(opts.Definition)
	d, findings, err := v1alpha1.LoadDistroFile(defPath)
	if err != nil {
		return nil, err
	}
	for _, w := range findings.Warnings() {
		log.Warn(w.String())
	}
	baseDir, err := filepath.Abs(filepath.Dir(defPath))
	if err != nil {
		return nil, err
	}
	arches, err := resolveArches(d, opts.Architectures)
	if err != nil {
		return nil, err
	}
	planned, err := plan(d, arches)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", defPath, err)
	}
	var set *v1alpha1.ActionSet
	if d.Spec.Actions != nil {
		set = d.Spec.Actions.OnCreate
	}
	if err := checkActions(set); err != nil {
		return nil, fmt.Errorf("%s: %w", defPath, err)
	}
	out, err := packagePath(opts.OutputDir, d, arches)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", defPath, err)
	}
	if err := os.MkdirAll(opts.OutputDir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}

	b := &builder{opts: opts, log: log, distro: d, baseDir: baseDir, arches: arches, planned: planned, path: out}
	actions := &actionRunner{set: set, baseDir: baseDir, out: opts.ActionOutput, log: log}
	if set == nil {
		actions.set = &v1alpha1.ActionSet{}
	}
	res, err := b.build(ctx, actions)
	if err != nil {
		if ferr := actions.run(context.WithoutCancel(ctx), "onFailure", actions.set.OnFailure); ferr != nil {
			log.Error("onFailure action failed", "error", ferr)
		}
		return nil, err
	}
	if err := actions.run(ctx, "onSuccess", actions.set.OnSuccess); err != nil {
		return nil, fmt.Errorf("package written to %s, but: %w", res.Path, err)
	}
	return res, nil
}

// resolveArches picks the architectures: the override, else the
// definition's, else this machine's.
func resolveArches(d *v1alpha1.Distro, override []string) ([]string, error) {
	arches := override
	if len(arches) == 0 {
		arches = d.Arches()
	}
	if len(arches) == 0 {
		arches = []string{runtime.GOARCH}
	}
	var out []string
	for _, a := range arches {
		if !slices.Contains(v1alpha1.Architectures, a) {
			return nil, fmt.Errorf("architecture %q is not one of %v", a, v1alpha1.Architectures)
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// packageVersion is metadata.version, falling back to spec.version.
func packageVersion(d *v1alpha1.Distro) string {
	if d.Metadata.Version != "" {
		return d.Metadata.Version
	}
	return d.Spec.Version
}

// packagePath is the package file in outDir. Validation refuses a name or
// version that is not a file name part; checked again here because the
// file is written, and replaced, wherever the name points.
func packagePath(outDir string, d *v1alpha1.Distro, arches []string) (string, error) {
	version := packageVersion(d)
	for _, part := range []struct{ field, v string }{{"metadata.name", d.Metadata.Name}, {"the package version", version}} {
		if part.v == "" && part.field != "metadata.name" {
			continue
		}
		if err := v1alpha1.CheckFileNamePart(part.v); err != nil {
			return "", fmt.Errorf("%s: %w", part.field, err)
		}
	}
	name := FileName(d.Metadata.Name, arches, version, d.Metadata.Uncompressed)
	if filepath.Base(name) != name || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("package file name %q leaves the output directory", name)
	}
	return filepath.Join(outDir, name), nil
}

// builder carries one Create run.
type builder struct {
	opts    CreateOptions
	log     *slog.Logger
	distro  *v1alpha1.Distro
	baseDir string
	arches  []string
	planned []plannedEntry
	// path is the package file, from packagePath.
	path string
}

func (b *builder) build(ctx context.Context, actions *actionRunner) (*CreateResult, error) {
	if err := actions.run(ctx, "before", actions.set.Before); err != nil {
		return nil, err
	}
	stageDir, err := os.MkdirTemp(b.opts.TmpDir, "cargoship-create-*")
	if err != nil {
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	defer func() {
		// Best-effort cleanup of scratch files: the package is written (or
		// the error returned) either way.
		_ = os.RemoveAll(stageDir)
	}()

	staged, err := b.stage(ctx, stageDir)
	if err != nil {
		return nil, err
	}
	if err := actions.run(ctx, "after", actions.set.After); err != nil {
		return nil, err
	}
	d := b.resolved()
	if !b.opts.SkipSBOM {
		sbom, err := writeSBOM(stageDir, d, filepath.Base(b.path), staged)
		if err != nil {
			return nil, err
		}
		staged = append(staged, sbom)
		slices.SortFunc(staged, func(a, b stagedEntry) int { return strings.Compare(a.Name, b.Name) })
	}
	m, manifest, sums, err := b.manifest(d, staged)
	if err != nil {
		return nil, err
	}
	var sig []byte
	if b.opts.SigningKey != nil {
		sig = signManifest(b.opts.SigningKey, manifest)
	}
	path := b.path
	size, err := writePackage(ctx, path, !b.distro.Metadata.Uncompressed, manifest, sig, sums, staged)
	if err != nil {
		return nil, err
	}
	b.log.Info("package written", "path", path, "bytes", size, "entries", len(staged), "signed", sig != nil)
	return &CreateResult{Path: path, Size: size, Manifest: m}, nil
}

// resolved is the definition as built: build filled with the
// architectures, versions, time and the registry overrides pulled through.
func (b *builder) resolved() v1alpha1.Distro {
	d := *b.distro
	when := b.opts.BuildTime
	if when.IsZero() {
		when = time.Now()
	}
	d.Build = &v1alpha1.Build{
		Architectures: b.arches,
		Timestamp:     when.UTC().Format(time.RFC3339),
		Version:       packageVersion(b.distro),
		ToolVersion:   version.String(),
	}
	if len(b.arches) == 1 {
		d.Build.Architecture = b.arches[0]
	}
	if len(b.opts.RegistryOverrides) > 0 && len(d.Spec.Config.ImageConfig.Images) > 0 {
		d.Build.RegistryOverrides = map[string]string{}
		for _, o := range b.opts.RegistryOverrides {
			d.Build.RegistryOverrides[o.From] = o.To
		}
	}
	return d
}

// manifest indexes the staged entries and renders manifest.yaml and
// checksums.txt for d, the resolved definition.
func (b *builder) manifest(d v1alpha1.Distro, staged []stagedEntry) (*Manifest, []byte, []byte, error) {
	sums := Checksums{}
	m := &Manifest{Distro: d, Package: Index{Layout: layoutWithoutSBOM}}
	for _, s := range staged {
		m.Package.Entries = append(m.Package.Entries, s.Entry)
		sums[s.Name] = s.SHA256
		if s.Kind == KindSBOM {
			m.Package.Layout = layoutSBOM
		}
	}
	sumsFile := sums.Marshal()
	m.Package.Checksums = sha256Hex(sumsFile)
	manifest, err := MarshalManifest(m)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, manifest, sumsFile, nil
}

// writePackage writes the package to a temporary file beside path and
// renames it into place only when complete, so a failed or interrupted
// create leaves no package behind, and an old package is replaced
// atomically.
func writePackage(ctx context.Context, path string, compressed bool, manifest, sig, sums []byte, staged []stagedEntry) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	done := false
	defer func() {
		if !done {
			// Already failing: the partial file is removed best-effort and
			// the original error is the one returned.
			f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	pw, err := newPackageWriter(f, compressed, runtime.GOMAXPROCS(0))
	if err != nil {
		return 0, err
	}
	if err := pw.addBytes(ManifestName, manifest); err != nil {
		return 0, err
	}
	if sig != nil {
		if err := pw.addBytes(SignatureName, sig); err != nil {
			return 0, err
		}
	}
	if err := pw.addBytes(ChecksumsName, sums); err != nil {
		return 0, err
	}
	for _, s := range staged {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := pw.addFile(s.Entry, s.path); err != nil {
			return 0, err
		}
	}
	if err := pw.Close(); err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return 0, fmt.Errorf("write package: %w", err)
	}
	done = true
	return st.Size(), nil
}
