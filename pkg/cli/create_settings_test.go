package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/image"
	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
	"github.com/colonel-byte/cargoship/pkg/log/ptytest"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// settingsFile writes a settings file and returns the environment that
// names it, for runCLI.
func settingsFile(t *testing.T, body string) map[string]string {
	t.Helper()
	p := filepath.Join(t.TempDir(), SettingsFileName)
	writeFile(t, p, body)
	return map[string]string{"CARGOSHIP_SETTINGS": p, "SOURCE_DATE_EPOCH": "1767225600"}
}

// demoCopyWithImages copies testdata/demo and lists images in it.
func demoCopyWithImages(t *testing.T, refs ...string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(demoDef)))
	y := "    imageConfig:\n      compression: zstd\n      images:\n"
	for _, r := range refs {
		y += "        - " + r + "\n"
	}
	f, err := os.OpenFile(filepath.Join(dst, "distro.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(y)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return dst
}

func TestCreateArchitectureSettingIsTheFlagsDefault(t *testing.T) {
	env := settingsFile(t, "architecture: arm64\n")
	out, _, err := runCLI(t, env, "create", demoDef, "-o", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "cargoship-demo-arm64-0.1.0.tar.zst", filepath.Base(strings.TrimSpace(out)), "the setting replaces the definition's two architectures")

	out, _, err = runCLI(t, env, "create", demoDef, "-o", t.TempDir(), "--architecture", "amd64")
	require.NoError(t, err)
	assert.Equal(t, "cargoship-demo-amd64-0.1.0.tar.zst", filepath.Base(strings.TrimSpace(out)), "the flag wins")

	out, _, err = runCLI(t, settingsFile(t, "log_level: info\n"), "create", demoDef, "-o", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "cargoship-demo-multi-0.1.0.tar.zst", filepath.Base(strings.TrimSpace(out)), "without either, the definition's")
}

// inspectSBOM runs inspect --sbom and decodes what it prints.
func inspectSBOM(t *testing.T, pkg string) (pkgfile.SBOM, string) {
	t.Helper()
	out, _, err := runCLI(t, nil, "inspect", pkg, "--sbom")
	require.NoError(t, err)
	var bom pkgfile.SBOM
	require.NoError(t, json.Unmarshal([]byte(out), &bom))
	return bom, out
}

func TestInspectSBOMPrintsTheSBOMOfEveryEntry(t *testing.T) {
	out, _, err := runCLI(t, map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}, "create", demoDef, "-o", t.TempDir())
	require.NoError(t, err)
	pkg := strings.TrimSpace(out)

	bom, raw := inspectSBOM(t, pkg)
	assert.Equal(t, "CycloneDX", bom.BOMFormat)
	assert.Equal(t, pkgfile.SBOMSpecVersion, bom.SpecVersion)
	p, err := pkgfile.Open(pkg, pkgfile.OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer func() { _ = p.Close() }()
	want, err := p.SBOM()
	require.NoError(t, err)
	assert.Equal(t, string(want), raw, "inspect --sbom prints the entry's bytes, nothing else")

	byRef := map[string]pkgfile.SBOMComponent{}
	for _, c := range bom.Components {
		byRef[c.BOMRef] = c
	}
	for _, e := range p.Entries() {
		if e.Kind == pkgfile.KindSBOM {
			continue
		}
		c, ok := byRef[e.Name]
		if assert.True(t, ok, "the SBOM lists %s", e.Name) {
			assert.Equal(t, []pkgfile.SBOMHash{{Alg: "SHA-256", Content: e.SHA256}}, c.Hashes)
		}
	}
	assert.Len(t, bom.Components, len(p.Entries())-1)

	text, _, err := runCLI(t, nil, "inspect", pkg)
	require.NoError(t, err)
	assert.Contains(t, text, "SBOM           sbom/cargoship.cdx.json (CycloneDX")

	_, _, err = runCLI(t, nil, "inspect", pkg, "--sbom", "--json")
	require.ErrorContains(t, err, "none of the others can be")
}

func TestCreateSkipSBOMSettingAndFlag(t *testing.T) {
	env := settingsFile(t, "distro:\n  create:\n    skip_sbom: true\n")
	out, _, err := runCLI(t, env, "create", demoDef, "-o", t.TempDir())
	require.NoError(t, err)
	pkg := strings.TrimSpace(out)
	_, _, err = runCLI(t, nil, "inspect", pkg, "--sbom")
	require.ErrorIs(t, err, pkgfile.ErrNoSBOM)
	require.ErrorContains(t, err, "--sbom: package "+pkg+": the package carries no SBOM (built with skip_sbom")
	text, _, err := runCLI(t, nil, "inspect", pkg)
	require.NoError(t, err)
	assert.Contains(t, text, "SBOM           none (built with skip_sbom")

	out, _, err = runCLI(t, env, "create", demoDef, "-o", t.TempDir(), "--skip-sbom=false")
	require.NoError(t, err)
	bom, _ := inspectSBOM(t, strings.TrimSpace(out))
	assert.NotEmpty(t, bom.Components, "the flag wins over the setting")

	out, _, err = runCLI(t, nil, "create", demoDef, "-o", t.TempDir(), "--skip-sbom")
	require.NoError(t, err)
	_, _, err = runCLI(t, nil, "inspect", strings.TrimSpace(out), "--sbom")
	require.ErrorIs(t, err, pkgfile.ErrNoSBOM)
}

// The acceptance test of --registry-override: the image is served by a
// "mirror" (the in-process registry) and named in the definition by a
// registry that does not resolve; the package names the original.
func TestCreateRegistryOverrideFlagAndSetting(t *testing.T) {
	mirror := imagetest.NewRegistry()
	t.Cleanup(mirror.Close)
	img, err := imagetest.RandomImage("amd64", 16<<10, 2)
	require.NoError(t, err)
	img = mutate.MediaType(img, types.DockerManifestSchema2)
	digest, err := img.Digest()
	require.NoError(t, err)
	_, err = mirror.Push("team/app:1.0", img)
	require.NoError(t, err)
	const original = "registry.invalid/team/app:1.0"
	def := demoCopyWithImages(t, original)

	check := func(t *testing.T, pkg string) {
		t.Helper()
		out, _, err := runCLI(t, nil, "inspect", pkg, "--json")
		require.NoError(t, err)
		var report struct {
			Images map[string][]inspectImage
		}
		require.NoError(t, json.Unmarshal([]byte(out), &report))
		assert.Equal(t, map[string][]inspectImage{"amd64": {{Ref: original, Digest: digest.String()}}}, report.Images)

		p, err := pkgfile.Open(pkg, pkgfile.OpenOptions{VerifyOnly: true})
		require.NoError(t, err)
		defer func() { _ = p.Close() }()
		name, _, _ := p.ImageArchive("amd64")
		r, err := p.OpenEntry(name)
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		// ReadArchive names each image by its RepoTags in manifest.json.
		sums, err := image.ReadArchive(r)
		require.NoError(t, err)
		require.Len(t, sums, 1)
		assert.Equal(t, original, sums[0].Ref, "the hosts import it under its original name")
		assert.Equal(t, digest.String(), sums[0].Digest)
	}

	t.Run("flag", func(t *testing.T) {
		out, _, err := runCLI(t, nil, "create", def, "-o", t.TempDir(), "-a", "amd64", "--registry-override", "registry.invalid="+mirror.Host)
		require.NoError(t, err)
		check(t, strings.TrimSpace(out))
	})
	t.Run("setting", func(t *testing.T) {
		env := settingsFile(t, "distro:\n  create:\n    registry_override:\n      - registry.invalid="+mirror.Host+"\n")
		out, _, err := runCLI(t, env, "create", def, "-o", t.TempDir(), "-a", "amd64")
		require.NoError(t, err)
		check(t, strings.TrimSpace(out))

		// The flag replaces the setting's list: this mirror has no image.
		_, _, err = runCLI(t, env, "create", def, "-o", t.TempDir(), "-a", "amd64", "--registry-override", "registry.invalid=127.0.0.1:1")
		require.ErrorContains(t, err, "registry override registry.invalid=127.0.0.1:1")
	})
	t.Run("bad items name where they were given", func(t *testing.T) {
		_, _, err := runCLI(t, nil, "create", def, "-o", t.TempDir(), "--registry-override", "registry.invalid")
		require.ErrorContains(t, err, `--registry-override "registry.invalid": want registry=replacement`)
		env := settingsFile(t, "distro:\n  create:\n    registry_override:\n      - registry.invalid=mirror\n")
		_, _, err = runCLI(t, env, "create", def, "-o", t.TempDir())
		require.ErrorContains(t, err, "distro.create.registry_override: \"registry.invalid=mirror\"")
		require.ErrorContains(t, err, env["CARGOSHIP_SETTINGS"])
	})
}

func TestColourFollowsTheFlagTheSettingAndTheTerminal(t *testing.T) {
	tty := ptytest.Open(t)
	for _, tc := range []struct {
		name     string
		args     []string
		settings Settings
		w        io.Writer
		term     string
		want     bool
	}{
		{"a terminal", nil, Settings{}, tty, "xterm-256color", true},
		{"--no-color", []string{"--no-color"}, Settings{}, tty, "xterm-256color", false},
		{"no_color, NO_COLOR or CARGOSHIP_NO_COLOR", nil, Settings{NoColor: true}, tty, "xterm-256color", false},
		{"not a terminal", nil, Settings{}, &strings.Builder{}, "xterm-256color", false},
		{"a dumb terminal", nil, Settings{}, tty, "dumb", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := NewRootCommand(&strings.Builder{}, &strings.Builder{}, func(string) (string, bool) { return "", false })
			require.NoError(t, root.ParseFlags(tc.args))
			env := map[string]string{"TERM": tc.term}
			app := &App{Settings: tc.settings, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
			assert.Equal(t, tc.want, app.colorOn(root, tc.w))
		})
	}
}
