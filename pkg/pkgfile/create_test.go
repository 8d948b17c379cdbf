package pkgfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/version"
)

func readEntry(t testing.TB, p *Package, name string) []byte {
	t.Helper()
	r, err := p.OpenEntry(name)
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err, name)
	return b
}

func TestCreateDemoCarriesEveryEntryWithItsMetadata(t *testing.T) {
	opts := createOpts(t, demoDir)
	res := mustCreate(t, opts)
	assert.Equal(t, filepath.Join(opts.OutputDir, "cargoship-demo-multi-0.1.0.tar.zst"), res.Path)
	assert.Equal(t, []string{"cargoship-demo-multi-0.1.0.tar.zst"}, dirNames(t, opts.OutputDir), "only the package is left in the output dir")

	p, err := Open(res.Path, OpenOptions{TmpDir: t.TempDir()})
	require.NoError(t, err)
	defer p.Close()

	b := p.Distro.Build
	assert.Equal(t, []string{"amd64", "arm64"}, b.Architectures)
	assert.Equal(t, []string{"amd64", "arm64"}, p.Arches())
	assert.Equal(t, "2026-05-01T12:00:00Z", b.Timestamp)
	assert.Equal(t, version.String(), b.ToolVersion)
	assert.Equal(t, "0.1.0", b.Version)
	assert.False(t, p.Signed)

	var names []string
	for _, e := range p.Entries() {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{
		"files/0/cargoship-demo", "files/1/inline.conf", "manifests/0/demo-namespace.yaml",
		"os/0/demo-engine", "os/1/demo-engine.service", "os/2/demo-tool", "os/3/arch.txt", "sbom/cargoship.cdx.json", "selinux/0/demo.cil",
	}, names)

	motd, _ := p.Entry("files/0/cargoship-demo")
	assert.Equal(t, Mode(0o640), motd.Mode)
	assert.Equal(t, "root", motd.User)
	assert.Equal(t, "adm", motd.Group)
	assert.Equal(t, "/etc/motd.d/cargoship-demo", motd.Target)
	src, err := os.ReadFile(filepath.Join(demoDir, "files/motd"))
	require.NoError(t, err)
	assert.Equal(t, src, readEntry(t, p, motd.Name))
	sum := sha256.Sum256(src)
	assert.Equal(t, hex.EncodeToString(sum[:]), motd.SHA256)
	assert.Equal(t, int64(len(src)), motd.Size)

	engine, _ := p.Entry("os/0/demo-engine")
	assert.True(t, engine.Executable)
	assert.Equal(t, Mode(0o755), engine.Mode)
	assert.Equal(t, v1alpha1.RouteBinary, engine.Selector.Package)

	tool, _ := p.Entry("os/2/demo-tool")
	assert.Equal(t, "bin/demo-tool", tool.ExtractPath)
	assert.Equal(t, "#!/bin/sh\necho demo-tool\n", string(readEntry(t, p, tool.Name)))

	inline, _ := p.Entry("files/1/inline.conf")
	assert.Equal(t, "# written from the definition itself\ngreeting=hello\n", string(readEntry(t, p, inline.Name)))

	arch, _ := p.Entry("os/3/arch.txt")
	assert.Equal(t, "arm64", arch.Architecture)

	mod, _ := p.Entry("selinux/0/demo.cil")
	assert.Equal(t, "demo", mod.Module)
	assert.Equal(t, []Entry{mod}, p.EntriesOf(KindSELinux))

	name, _, _ := p.ImageArchive("amd64")
	assert.Empty(t, name, "the demo carries no images")
	assert.Equal(t, "replicas: 1", p.Distro.Spec.Config.Engine.Manifest["demo-chart"], "chart values are carried")
}

func TestCreateOneArchitectureLeavesOtherArchitecturesFilesOut(t *testing.T) {
	opts := createOpts(t, demoDir)
	opts.Architectures = []string{"amd64"}
	res := mustCreate(t, opts)
	assert.Equal(t, "cargoship-demo-amd64-0.1.0.tar.zst", filepath.Base(res.Path))

	p, err := Open(res.Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, []string{"amd64"}, p.Arches())
	assert.Equal(t, "amd64", p.Distro.Build.Architecture)
	for _, e := range p.Entries() {
		assert.NotEqual(t, "arm64", e.Architecture, e.Name)
	}
	// The resolved definition lists exactly what the package carries.
	assert.Len(t, p.Distro.Spec.Config.OS.Files, 3)
	assert.Len(t, p.EntriesOf(KindOS), 3)
}

func TestCreateRejectsUnknownArchitecture(t *testing.T) {
	opts := createOpts(t, demoDir)
	opts.Architectures = []string{"riscv64"}
	_, err := Create(context.Background(), opts)
	require.ErrorContains(t, err, `architecture "riscv64"`)
}

func TestCreateIsReproducible(t *testing.T) {
	a := mustCreate(t, createOpts(t, demoDir))
	b := mustCreate(t, createOpts(t, demoDir))
	da, err := os.ReadFile(a.Path)
	require.NoError(t, err)
	db, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(da, db), "two builds of one definition at one build time differ")
}

func TestCreateUncompressedWritesPlainTarThatTarReads(t *testing.T) {
	dir := copyDemo(t)
	def := filepath.Join(dir, "distro.yaml")
	data, err := os.ReadFile(def)
	require.NoError(t, err)
	writeFile(t, def, bytes.Replace(data, []byte("  version: 0.1.0\n"), []byte("  version: 0.1.0\n  uncompressed: true\n"), 1), 0o644)
	res := mustCreate(t, createOpts(t, dir))
	assert.Equal(t, "cargoship-demo-multi-0.1.0.tar", filepath.Base(res.Path))

	out, err := exec.Command("tar", "-tvf", res.Path).CombinedOutput()
	require.NoError(t, err, string(out))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assert.Contains(t, lines[0], ManifestName, "manifest first")
	assert.Contains(t, lines[1], ChecksumsName)
	for _, l := range lines {
		assert.Contains(t, l, "0/0", "owner 0/0: %s", l)
		assert.Contains(t, l, "1970-01-01", "fixed mtime: %s", l)
	}
	p, err := Open(res.Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	p.Close()
}

func TestCreateFetchesEveryArchiveKindOverHTTP(t *testing.T) {
	tool := randomBytes(t, 100<<10)
	payload := map[string][]byte{"bin/tool": tool, "README": []byte("readme")}
	files := map[string][]byte{"/plain/big.bin": randomBytes(t, 3<<20)}
	kinds := []string{"tar", "tar.gz", "tar.zst", "zip"}
	for _, k := range kinds {
		files["/archives/tool."+k] = archive(t, k, payload)
	}
	srv := newFileServer(t, files)

	var yaml strings.Builder
	yaml.WriteString("kind: ZarfDistro\nmetadata:\n  name: remote\n  architecture: amd64\nspec:\n  type: k3s\n  version: 1.35.3-k3s1\n  config:\n    files:\n")
	yaml.WriteString("      - source: " + srv.url("/plain/big.bin") + "\n        target: /opt/big.bin\n        shasum: " + sha256Hex(files["/plain/big.bin"]) + "\n")
	for _, k := range kinds {
		yaml.WriteString("      - source: " + srv.url("/archives/tool."+k) + "\n        extractPath: bin/tool\n        target: /usr/local/bin/tool-" + strings.ReplaceAll(k, ".", "-") + "\n        executable: true\n        shasum: sha256:" + sha256Hex(files["/archives/tool."+k]) + "\n")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "distro.yaml"), []byte(yaml.String()), 0o644)

	opts := createOpts(t, dir)
	res := mustCreate(t, opts)
	assert.Equal(t, "cargoship-remote-amd64-1.35.3-k3s1.tar.zst", filepath.Base(res.Path), "version falls back to spec.version")
	p, err := Open(res.Path, OpenOptions{TmpDir: t.TempDir()})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, files["/plain/big.bin"], readEntry(t, p, "files/0/big.bin"))
	for i, k := range kinds {
		name := EntryName(KindFiles, i+1, "tool-"+strings.ReplaceAll(k, ".", "-"))
		assert.Equal(t, tool, readEntry(t, p, name), k)
		e, _ := p.Entry(name)
		assert.Equal(t, sha256Hex(tool), e.SHA256, k)
	}
}

// definitionWithFile is a one-file definition pointing at source.
func definitionWithFile(t testing.TB, source, shasum string) string {
	t.Helper()
	y := "kind: ZarfDistro\nmetadata:\n  name: one\n  architecture: amd64\nspec:\n  type: k3s\n  version: 1.35.3-k3s1\n  config:\n    files:\n" +
		"      - source: " + source + "\n        target: /opt/file\n"
	if shasum != "" {
		y += "        shasum: \"" + shasum + "\"\n"
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "distro.yaml"), []byte(y), 0o644)
	return dir
}

func TestCreateFailuresLeaveNoPackage(t *testing.T) {
	content := randomBytes(t, 256<<10)
	srv := newFileServer(t, map[string][]byte{"/file": content, "/cut": content})
	srv.cut["/cut"] = true

	cases := []struct {
		name, source, shasum, want string
	}{
		{"shasum mismatch", srv.url("/file"), strings.Repeat("0", 64), "sha256 mismatch"},
		{"missing local source", "does-not-exist.bin", "", "does not exist"},
		{"404", srv.url("/nope"), "", "404"},
		{"connection dropped mid-file", srv.url("/cut"), "", "/cut"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := createOpts(t, definitionWithFile(t, tc.source, tc.shasum))
			opts.Retries = 2
			_, err := Create(context.Background(), opts)
			require.Error(t, err)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "spec.config.files[0]", "the error names the definition field")
			t.Log(err)
			assert.Empty(t, dirNames(t, opts.OutputDir), "no package, partial or whole")
			assert.Empty(t, dirNames(t, opts.TmpDir), "staging removed")
		})
	}
	// The dropped connection was retried before giving up (the first cut
	// made progress, so it does not count against the 2 retries).
	assert.GreaterOrEqual(t, srv.requests("/cut"), 3)
	assert.Equal(t, 1, srv.requests("/nope"), "a 404 is not retried")
}

func TestCreateMismatchIsATypedError(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/file": []byte("x")})
	_, err := Create(context.Background(), createOpts(t, definitionWithFile(t, srv.url("/file"), strings.Repeat("a", 64))))
	var mm *fetch.MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, sha256Hex([]byte("x")), mm.Actual)
}

func TestCreateRefusesBadDefinitionBeforeFetching(t *testing.T) {
	srv := newFileServer(t, map[string][]byte{"/file": []byte("x")})
	dir := definitionWithFile(t, srv.url("/file"), "")
	def := filepath.Join(dir, "distro.yaml")
	data, _ := os.ReadFile(def)
	writeFile(t, def, bytes.Replace(data, []byte("type: k3s"), []byte("type: k8s"), 1), 0o644)
	opts := createOpts(t, dir)
	_, err := Create(context.Background(), opts)
	var de *v1alpha1.DocumentError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, "spec.type")
	assert.Equal(t, 0, srv.total(), "nothing fetched for a bad definition")
	assert.Empty(t, dirNames(t, opts.OutputDir))
}

func TestSecondCreateDownloadsNothing(t *testing.T) {
	archiveBytes := archive(t, "tar.gz", map[string][]byte{"bin/a": []byte("a"), "bin/b": []byte("b")})
	srv := newFileServer(t, map[string][]byte{"/f1": randomBytes(t, 1<<20), "/bundle.tar.gz": archiveBytes})
	y := "kind: ZarfDistro\nmetadata:\n  name: cached\n  architecture: amd64\nspec:\n  type: k3s\n  version: 1.35.3-k3s1\n  config:\n    files:\n" +
		"      - source: " + srv.url("/f1") + "\n        target: /opt/f1\n" +
		"      - source: " + srv.url("/bundle.tar.gz") + "\n        extractPath: bin/a\n        target: /opt/a\n" +
		"      - source: " + srv.url("/bundle.tar.gz") + "\n        extractPath: bin/b\n        target: /opt/b\n"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "distro.yaml"), []byte(y), 0o644)

	cache := t.TempDir()
	first := createOpts(t, dir)
	first.CacheDir = cache
	a := mustCreate(t, first)
	assert.Equal(t, 1, srv.requests("/f1"))
	assert.Equal(t, 1, srv.requests("/bundle.tar.gz"), "one source shared by two entries is downloaded once")

	second := createOpts(t, dir)
	second.CacheDir = cache
	b := mustCreate(t, second)
	assert.Equal(t, 2, srv.total(), "the second create made no request at all")

	da, _ := os.ReadFile(a.Path)
	db, _ := os.ReadFile(b.Path)
	assert.True(t, bytes.Equal(da, db), "the cached build is the same package")
}

func TestCreateRunsActionsAroundTheBuild(t *testing.T) {
	dir := copyDemo(t)
	def := filepath.Join(dir, "distro.yaml")
	data, _ := os.ReadFile(def)
	actions := `      before:
        - cmd: echo before >> log && echo generated > files/generated.txt
      after:
        - cmd: echo "after $(cat files/generated.txt)" >> log
      onSuccess:
        - cmd: echo success >> log
      onFailure:
        - cmd: echo failure >> log
`
	data = bytes.Replace(data, []byte("      before:\n        - description: record what built the demo\n          cmd: test -f files/motd\n"), []byte(actions), 1)
	data = bytes.Replace(data, []byte("    files:\n      - source: files/motd\n"), []byte("    files:\n      - source: files/generated.txt\n        target: /etc/generated.txt\n      - source: files/motd\n"), 1)
	writeFile(t, def, data, 0o644)

	res := mustCreate(t, createOpts(t, dir))
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	assert.Equal(t, "before\nafter generated\nsuccess\n", string(log))
	p, err := Open(res.Path, OpenOptions{TmpDir: t.TempDir()})
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, "generated\n", string(readEntry(t, p, "files/0/generated.txt")), "a file made by a before action is packaged")
}

func TestCreateFailingActionStopsAndRunsOnFailure(t *testing.T) {
	dir := copyDemo(t)
	def := filepath.Join(dir, "distro.yaml")
	data, _ := os.ReadFile(def)
	data = bytes.Replace(data, []byte("cmd: test -f files/motd\n"), []byte("cmd: exit 3\n      onFailure:\n        - cmd: echo cleaned > failure-ran\n"), 1)
	writeFile(t, def, data, 0o644)
	opts := createOpts(t, dir)
	_, err := Create(context.Background(), opts)
	require.ErrorContains(t, err, "spec.actions.onCreate.before[0] (record what built the demo)")
	require.ErrorContains(t, err, "exit status 3")
	got, err := os.ReadFile(filepath.Join(dir, "failure-ran"))
	require.NoError(t, err)
	assert.Equal(t, "cleaned\n", string(got))
	assert.Empty(t, dirNames(t, opts.OutputDir))
}

func TestCreateRefusesActionsItCannotHonour(t *testing.T) {
	dir := copyDemo(t)
	def := filepath.Join(dir, "distro.yaml")
	data, _ := os.ReadFile(def)
	data = bytes.Replace(data, []byte("cmd: test -f files/motd\n"), []byte("cmd: echo hi > ran\n          setVariable: GREETING\n"), 1)
	writeFile(t, def, data, 0o644)
	_, err := Create(context.Background(), createOpts(t, dir))
	require.ErrorContains(t, err, "setVariable")
	_, statErr := os.Stat(filepath.Join(dir, "ran"))
	assert.True(t, os.IsNotExist(statErr), "nothing ran")
}

func TestCreateHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := createOpts(t, demoDir)
	_, err := Create(ctx, opts)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, dirNames(t, opts.OutputDir))
}

func TestCreateKeepsDefinitionOrderIndexes(t *testing.T) {
	res := mustCreate(t, createOpts(t, demoDir))
	p, err := Open(res.Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer p.Close()
	var idx []int
	for _, e := range p.EntriesOf(KindOS) {
		idx = append(idx, e.Index)
	}
	assert.True(t, slices.IsSorted(idx))
	assert.Equal(t, []int{0, 1, 2, 3}, idx)
}
