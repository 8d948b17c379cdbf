package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// apiTestdata holds the document corpus of pkg/api/v1alpha1; the earlier
// tool's cargoship-config.yaml is there verbatim.
const apiTestdata = "../api/v1alpha1/testdata"

// testdataPath is a corpus file's absolute path, for tests that change
// their working directory.
func testdataPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(apiTestdata, rel))
	require.NoError(t, err)
	return p
}

// settingsEnv isolates a settings test: an empty working directory, a home
// and a user config directory of its own, and the given CARGOSHIP_*
// variables as the only environment LoadSettings sees.
func settingsEnv(t *testing.T, vars map[string]string) (dir string, getenv func(string) string) {
	t.Helper()
	dir = t.TempDir()
	t.Chdir(dir)
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return dir, func(k string) string { return vars[k] }
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

func TestSettingsNoFileIsDefaults(t *testing.T) {
	_, getenv := settingsEnv(t, nil)
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.Equal(t, DefaultSettings(), s)
	assert.Empty(t, s.File)
	assert.Equal(t, "info", s.LogLevel)
	assert.Equal(t, 20*time.Minute, s.Timeout)
	assert.Equal(t, 30, s.Concurrency)
}

func TestSettingsFileInWorkingDirectory(t *testing.T) {
	_, getenv := settingsEnv(t, nil)
	writeFile(t, SettingsFileName, "log_level: debug\ntimeout: 5m\ndistro:\n  install:\n    concurrency: 0\n    host_update: true\n")
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.Equal(t, SettingsFileName, s.File)
	assert.Equal(t, "debug", s.LogLevel)
	assert.Equal(t, 5*time.Minute, s.Timeout)
	assert.Equal(t, 0, s.Concurrency, "an explicit 0 (unlimited) is kept, not taken for unset")
	assert.True(t, s.UpdateHosts)
	assert.Equal(t, "console", s.LogFormat, "what the file leaves out keeps its default")
}

func TestSettingsUserConfigDirectory(t *testing.T) {
	dir, getenv := settingsEnv(t, nil)
	user := filepath.Join(dir, "home", ".config", "cargoship", SettingsFileName)
	writeFile(t, user, "log_format: json\n")
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.Equal(t, user, s.File)
	assert.Equal(t, "json", s.LogFormat)

	writeFile(t, SettingsFileName, "log_format: text\n")
	s, err = LoadSettings(getenv)
	require.NoError(t, err)
	assert.Equal(t, SettingsFileName, s.File, "the working directory's file comes first")
	assert.Equal(t, "text", s.LogFormat)
}

func TestSettingsVariableNamesTheFile(t *testing.T) {
	dir, _ := settingsEnv(t, nil)
	writeFile(t, SettingsFileName, "log_level: warn\n")
	named := filepath.Join(dir, "elsewhere", "tool.yaml")
	writeFile(t, named, "log_level: error\n")
	other := filepath.Join(dir, "elsewhere", "old.yaml")
	writeFile(t, other, "log_level: debug\n")
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	s, err := LoadSettings(env(map[string]string{"CARGOSHIP_SETTINGS": named}))
	require.NoError(t, err)
	assert.Equal(t, named, s.File, "CARGOSHIP_SETTINGS wins over the working directory")
	assert.Equal(t, "error", s.LogLevel)
	assert.Empty(t, s.Warnings)

	s, err = LoadSettings(env(map[string]string{"CARGOSHIP_CONFIG": named}))
	require.NoError(t, err)
	assert.Equal(t, named, s.File, "CARGOSHIP_CONFIG is still read")
	assert.Equal(t, []string{"CARGOSHIP_CONFIG is deprecated: name the settings file with CARGOSHIP_SETTINGS instead"}, s.Warnings)

	s, err = LoadSettings(env(map[string]string{"CARGOSHIP_SETTINGS": named, "CARGOSHIP_CONFIG": other}))
	require.NoError(t, err)
	assert.Equal(t, named, s.File, "CARGOSHIP_SETTINGS wins over CARGOSHIP_CONFIG")
	assert.Equal(t, []string{"CARGOSHIP_CONFIG is deprecated and ignored: CARGOSHIP_SETTINGS names the settings file"}, s.Warnings)

	s, err = LoadSettings(env(map[string]string{"CARGOSHIP_SETTINGS": named, "CARGOSHIP_CONFIG": named}))
	require.NoError(t, err)
	assert.Equal(t, named, s.File)
	require.Len(t, s.Warnings, 1)
	assert.Contains(t, s.Warnings[0], "unset CARGOSHIP_CONFIG")

	missing := filepath.Join(dir, "nope.yaml")
	for _, v := range []string{"CARGOSHIP_SETTINGS", "CARGOSHIP_CONFIG"} {
		_, err = LoadSettings(env(map[string]string{v: missing}))
		require.Error(t, err, "a file %s names must exist", v)
		assert.Contains(t, err.Error(), v+" names "+missing)
	}
}

// The deprecated variable's warning reaches the log of a command.
func TestSettingsDeprecatedVariableIsLogged(t *testing.T) {
	dir, _ := settingsEnv(t, nil)
	named := filepath.Join(dir, "tool.yaml")
	writeFile(t, named, "log_level: info\n")
	pkg := filepath.Join(dir, "missing.tar.zst")
	_, errOut, err := runCLI(t, map[string]string{"CARGOSHIP_CONFIG": named}, "inspect", pkg)
	require.Error(t, err, "there is no package")
	assert.Contains(t, errOut, "level=WARN")
	assert.Contains(t, errOut, "CARGOSHIP_CONFIG is deprecated: name the settings file with CARGOSHIP_SETTINGS instead")
}

func TestSettingsCreateKeysAndColour(t *testing.T) {
	_, getenv := settingsEnv(t, nil)
	writeFile(t, SettingsFileName, "no_color: true\narchitecture: arm64\ndistro:\n  create:\n    skip_sbom: true\n"+
		"    registry_override:\n      - docker.io=mirror.internal:5000\n      - quay.io=mirror.internal:5000/quay\n")
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.True(t, s.NoColor)
	assert.Equal(t, "arm64", s.Architecture)
	assert.True(t, s.SkipSBOM)
	assert.Equal(t, []string{"docker.io=mirror.internal:5000", "quay.io=mirror.internal:5000/quay"}, s.RegistryOverrides)

	// CARGOSHIP_NO_COLOR is the setting's variable, so it can turn colour
	// back on; NO_COLOR turns it off whatever its value and whatever else.
	for vars, want := range map[[2]string]bool{
		{"CARGOSHIP_NO_COLOR", "false"}: false,
		{"CARGOSHIP_NO_COLOR", "true"}:  true,
		{"NO_COLOR", "1"}:               true,
		{"NO_COLOR", "0"}:               true,
	} {
		_, getenv := settingsEnv(t, map[string]string{vars[0]: vars[1]})
		writeFile(t, SettingsFileName, "no_color: true\n")
		s, err := LoadSettings(getenv)
		require.NoError(t, err)
		assert.Equal(t, want, s.NoColor, "%s=%s over no_color: true", vars[0], vars[1])
	}
	_, getenv = settingsEnv(t, map[string]string{"NO_COLOR": "yes", "CARGOSHIP_NO_COLOR": "false"})
	s, err = LoadSettings(getenv)
	require.NoError(t, err)
	assert.True(t, s.NoColor, "NO_COLOR wins")
	_, getenv = settingsEnv(t, nil)
	s, err = LoadSettings(getenv)
	require.NoError(t, err)
	assert.False(t, s.NoColor, "colour is on by default")
}

func TestSettingsEnvironmentOverridesFile(t *testing.T) {
	_, getenv := settingsEnv(t, map[string]string{
		"CARGOSHIP_LOG_LEVEL":          "error",
		"CARGOSHIP_CONCURRENCY":        "7",
		"CARGOSHIP_WORKER_CONCURRENCY": "0",
		"CARGOSHIP_UPDATE_HOSTS":       "false",
		"CARGOSHIP_TIMEOUT":            "90s",
		"CARGOSHIP_CACHE_DIR":          "/srv/cache",
	})
	writeFile(t, SettingsFileName, "log_level: debug\ntimeout: 1h\ncache_dir: /var/cache/x\n"+
		"distro:\n  install:\n    concurrency: 300\n    worker_concurrency: 5\n    host_update: true\n    firewall_update: true\n")
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.Equal(t, "error", s.LogLevel)
	assert.Equal(t, 7, s.Concurrency)
	assert.Equal(t, 0, s.WorkerConcurrency)
	assert.False(t, s.UpdateHosts)
	assert.True(t, s.UpdateFirewall, "a variable that is not set leaves the file's value")
	assert.Equal(t, 90*time.Second, s.Timeout)
	assert.Equal(t, "/srv/cache", s.CacheDir)
}

func TestSettingsBadEnvironmentValues(t *testing.T) {
	for k, v := range map[string]string{
		"CARGOSHIP_CONCURRENCY":        "-1",
		"CARGOSHIP_UPDATE_HOSTS":       "maybe",
		"CARGOSHIP_TIMEOUT":            "soon",
		"CARGOSHIP_WORKER_CONCURRENCY": "five",
		"CARGOSHIP_REQUIRE_SIGNATURE":  "maybe",
		"CARGOSHIP_NO_COLOR":           "sometimes",
	} {
		_, getenv := settingsEnv(t, map[string]string{k: v})
		_, err := LoadSettings(getenv)
		if assert.Error(t, err, "%s=%s", k, v) {
			assert.Contains(t, err.Error(), k)
		}
	}
}

func TestSettingsBrokenFileNamesTheLine(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"unknown key":  {"log_level: info\ndistro:\n  install:\n    concurency: 5\n", "cargoship-config.yaml:4:5: distro.install.concurency: unknown field \"concurency\" (did you mean \"concurrency\"?)"},
		"bad value":    {"log_level: info\ntimeout: forever\n", "cargoship-config.yaml:2:10: timeout: \"forever\" is not a duration"},
		"wrong type":   {"distro:\n  install:\n    host_update: [yes]\n", "cargoship-config.yaml:3:18: distro.install.host_update: want true or false, got a list"},
		"syntax error": {"log_level: info\ndistro: {install: {concurrency: 5}\n", "cargoship-config.yaml:2:9:"},
		"missing key":  {"log_level: info\ntrusted_keys:\n  - keys/site.pub\n", "cargoship-config.yaml:3:5: trusted_keys[0]: \"keys/site.pub\" ("},
		"bad override": {"distro:\n  create:\n    registry_override:\n      - docker.io=a.example\n      - mirror.internal:5000\n", "cargoship-config.yaml:5:9: distro.create.registry_override[1]: \"mirror.internal:5000\" is not registry=replacement"},
		"bad arch":     {"architecture: riscv64\n", "cargoship-config.yaml:1:15: architecture: \"riscv64\" is not one of"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, getenv := settingsEnv(t, nil)
			writeFile(t, SettingsFileName, c.body)
			_, err := LoadSettings(getenv)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestSettingsEarlierToolsFileLoads(t *testing.T) {
	earlier := testdataPath(t, "valid/settings/earlier-cargoship-config.yaml")
	dir, getenv := settingsEnv(t, nil)
	data, err := os.ReadFile(earlier)
	require.NoError(t, err)
	writeFile(t, SettingsFileName, string(data))
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	home := filepath.Join(dir, "home")
	assert.Equal(t, "info", s.LogLevel)
	assert.Equal(t, "console", s.LogFormat)
	assert.Equal(t, "/tmp", s.TmpDir)
	assert.Equal(t, filepath.Join(home, ".zarf"), s.CacheDir, "zarf_cache is read, ~ expanded")
	assert.Equal(t, 20*time.Minute, s.Timeout)
	assert.Equal(t, 10, s.OCIConcurrency)
	assert.Equal(t, filepath.Join(home, "zarf"), s.Output)
	assert.Equal(t, 300, s.Concurrency)
	assert.Equal(t, 5, s.WorkerConcurrency)
	assert.True(t, s.UpdateHosts)
	assert.True(t, s.UpdateFirewall)
}

func TestSettingsCacheDirWinsOverZarfCache(t *testing.T) {
	_, getenv := settingsEnv(t, nil)
	writeFile(t, SettingsFileName, "zarf_cache: /old\ncache_dir: /new\n")
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.Equal(t, "/new", s.CacheDir)
}

// TestSettingsFlagsWinOverEnvironment runs the root command: a flag beats
// CARGOSHIP_LOG_LEVEL and CARGOSHIP_LOG_FORMAT, which beat the file. The
// debug line naming the settings file shows the level and the format that
// were resolved.
func TestSettingsFlagsWinOverEnvironment(t *testing.T) {
	def := testdataPath(t, "valid/distro/k3s-minimal.yaml")
	settingsEnv(t, nil)
	writeFile(t, SettingsFileName, "log_level: info\nlog_format: console\n")
	env := map[string]string{"CARGOSHIP_LOG_LEVEL": "error", "CARGOSHIP_LOG_FORMAT": "text"}
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		root := NewRootCommand(&out, &errOut, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		root.SetArgs(args)
		require.NoError(t, root.Execute())
		return errOut.String()
	}
	assert.Empty(t, run("validate", "--distro", def), "level error from the environment hides the debug line")
	logged := run("--log-level", "debug", "--log-format", "json", "validate", "--distro", def)
	assert.True(t, strings.HasPrefix(logged, "{"), "json from the flag, not text from the environment: %q", logged)
	assert.Contains(t, logged, `"msg":"using settings file"`)
	assert.Contains(t, logged, SettingsFileName)
}

// writePublicKey writes a fresh public key file as cargoship keygen does.
func writePublicKey(t *testing.T, path string) {
	t.Helper()
	_, priv, err := pkgfile.GenerateKeyPair()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, pkgfile.WriteKeyPair(path+".key", path, priv, false))
}

func TestSettingsTrustPolicy(t *testing.T) {
	dir, _ := settingsEnv(t, nil)
	conf := filepath.Join(dir, "etc", SettingsFileName)
	writePublicKey(t, filepath.Join(dir, "etc", "keys", "site.pub"))
	writeFile(t, conf, "trusted_keys:\n  - keys/site.pub\nrequire_signature: true\n")
	env := map[string]string{"CARGOSHIP_CONFIG": conf}
	s, err := LoadSettings(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "etc", "keys", "site.pub")}, s.TrustedKeys,
		"a relative key is the settings file's, not the working directory's")
	assert.True(t, s.RequireSignature)
	assert.Equal(t, "require_signature in "+conf, s.RequiredBy)

	p, err := s.trustPolicy(nil)
	require.NoError(t, err)
	require.Len(t, p.Keys, 1)
	assert.Equal(t, "trusted_keys[0] in "+conf, p.Keys[0].Source)
	assert.True(t, p.RequireSignature)

	// --verify-key replaces the file's keys, as a flag wins over its setting.
	flagKey := filepath.Join(dir, "flag.pub")
	writePublicKey(t, flagKey)
	p, err = s.trustPolicy([]string{flagKey})
	require.NoError(t, err)
	require.Len(t, p.Keys, 1)
	assert.Equal(t, "--verify-key "+flagKey, p.Keys[0].Source)
	_, err = s.trustPolicy([]string{filepath.Join(dir, "none.pub")})
	require.ErrorContains(t, err, "--verify-key")

	env["CARGOSHIP_REQUIRE_SIGNATURE"] = "false"
	s, err = LoadSettings(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.False(t, s.RequireSignature, "the variable wins over the file")
}

func TestSettingsRequireSignatureVariable(t *testing.T) {
	_, getenv := settingsEnv(t, map[string]string{"CARGOSHIP_REQUIRE_SIGNATURE": "true"})
	s, err := LoadSettings(getenv)
	require.NoError(t, err)
	assert.True(t, s.RequireSignature)
	assert.Equal(t, "CARGOSHIP_REQUIRE_SIGNATURE", s.RequiredBy)
	p, err := s.trustPolicy(nil)
	require.NoError(t, err)
	assert.True(t, p.Active(), "require_signature alone is a policy")
}
