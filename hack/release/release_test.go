package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/internal/testtier"
	"github.com/colonel-byte/cargoship/pkg/version"
)

// TestReleaseBuild runs the release as `mage release` does, into a
// temporary directory, and checks what a user checks before installing it
// (docs/release.md): the signature over checksums.txt verifies with the
// public key, every file's sha256 matches checksums.txt, and the binary
// reports the version it was built as. It compiles four static binaries
// (two commands, two architectures): minutes on a loaded machine.
func TestReleaseBuild(t *testing.T) {
	testtier.Slow(t, "builds a release: four static binaries, goreleaser and SBOMs (minutes)")
	if testing.Short() {
		t.Skip("builds a release: four binaries and goreleaser")
	}
	root, err := repo.Root()
	require.NoError(t, err)
	keys := t.TempDir()
	priv, pub := newKey(t, keys)
	dist := filepath.Join(t.TempDir(), "dist")
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	log := &testLog{t: t}
	require.NoError(t, Build(ctx, Options{Root: root, Dist: dist, Key: priv, Log: log}), "last output:\n%s", log.tail())
	t.Logf("release built in %s", time.Since(start).Round(time.Second))

	// The signature, with the key published apart from the release.
	require.NoError(t, VerifyFile(pub, filepath.Join(dist, "checksums.txt"), filepath.Join(dist, "checksums.txt.sig")))
	require.NoError(t, VerifyFile(filepath.Join(dist, PublicKeyName), filepath.Join(dist, "checksums.txt"), filepath.Join(dist, "checksums.txt.sig")))

	// Every sum, and every archive and SBOM has one.
	checked, err := VerifyChecksums(dist)
	require.NoError(t, err)
	meta := readMetadata(t, dist)
	var want []string
	for _, arch := range []string{"amd64", "arm64"} {
		want = append(want,
			"cargoship_"+meta.Version+"_linux_"+arch+".tar.gz",
			"terraform-provider-cargoship_"+meta.Version+"_linux_"+arch+".zip",
			"cargoship_linux_"+arch+".cdx.json",
			"terraform-provider-cargoship_v"+meta.Version+"_linux_"+arch+".cdx.json")
	}
	for _, name := range want {
		assert.Contains(t, checked, name, "checksums.txt does not list it")
	}

	// The amd64 binary, as a user unpacks it, says what it was built as.
	bin := filepath.Join(t.TempDir(), "cargoship")
	entries := extractTarGz(t, filepath.Join(dist, "cargoship_"+meta.Version+"_linux_amd64.tar.gz"), "cargoship", bin)
	for _, e := range []string{"LICENSE", "README.md", "CHANGELOG.md", "completions/cargoship.bash", "completions/_cargoship", "manpages/cargoship.1", "manpages/cargoship-apply.1"} {
		assert.Contains(t, entries, e, "the archive lacks it")
	}
	head := gitHead(t, root)
	got := versionJSON(t, bin, "version", "--json")
	assert.Equal(t, meta.Version, got.Version)
	assert.Equal(t, head, got.Commit)
	assert.NotEmpty(t, got.Date)
	assert.Equal(t, "linux/amd64", got.Platform)

	provider := filepath.Join(t.TempDir(), "provider")
	extractZip(t, filepath.Join(dist, "terraform-provider-cargoship_"+meta.Version+"_linux_amd64.zip"), "terraform-provider-cargoship_v"+meta.Version, provider)
	assert.Equal(t, got, versionJSON(t, provider, "-version", "-json"), "the provider reports another build")

	// Static: no cgo, so the binary runs on any Linux of its architecture.
	bi, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	assert.Contains(t, bi.Settings, debugSetting("CGO_ENABLED", "0"))

	// An SBOM per binary, naming it by digest.
	var bom BOM
	data, err := os.ReadFile(filepath.Join(dist, "cargoship_linux_amd64.cdx.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &bom))
	digest, err := fileSHA256(bin)
	require.NoError(t, err)
	assert.Equal(t, []Hash{{"SHA-256", digest}}, bom.Metadata.Component.Hashes)
	assert.Equal(t, meta.Version, bom.Metadata.Component.Version)
}

// testLog keeps the build's output and logs it, for a failure to show.
type testLog struct {
	t   *testing.T
	buf []byte
}

func (l *testLog) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *testLog) tail() string {
	lines := strings.Split(string(l.buf), "\n")
	return strings.Join(lines[max(0, len(lines)-60):], "\n")
}

type metadata struct {
	Version string `json:"version"`
}

// readMetadata reads goreleaser's metadata.json: the version it built.
func readMetadata(t *testing.T, dist string) metadata {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	require.NoError(t, err)
	var m metadata
	require.NoError(t, json.Unmarshal(data, &m))
	require.NotEmpty(t, m.Version)
	return m
}

func gitHead(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func versionJSON(t *testing.T, bin string, args ...string) version.Info {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	require.NoError(t, err, "%s %v", bin, args)
	var in version.Info
	require.NoError(t, json.Unmarshal(out, &in), "%s", out)
	return in
}

// extractTarGz writes the archive's entry name to dst and returns every
// entry's name.
func extractTarGz(t *testing.T, archive, name, dst string) []string {
	t.Helper()
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		if h.Name == name {
			writeExecutable(t, dst, tr)
		}
	}
	require.FileExists(t, dst, "%s has no %s; it has %v", archive, name, names)
	return names
}

func extractZip(t *testing.T, archive, name, dst string) {
	t.Helper()
	zr, err := zip.OpenReader(archive)
	require.NoError(t, err)
	defer zr.Close()
	i := slices.IndexFunc(zr.File, func(f *zip.File) bool { return f.Name == name })
	require.GreaterOrEqual(t, i, 0, "%s has no %s", archive, name)
	r, err := zr.File[i].Open()
	require.NoError(t, err)
	defer r.Close()
	writeExecutable(t, dst, r)
}

func writeExecutable(t *testing.T, dst string, r io.Reader) {
	t.Helper()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, r)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

func debugSetting(k, v string) debug.BuildSetting { return debug.BuildSetting{Key: k, Value: v} }
