package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	cslog "github.com/colonel-byte/cargoship/pkg/log"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// SettingsFileName is the optional tool settings file.
const SettingsFileName = "cargoship-config.yaml"

// EnvPrefix prefixes every environment variable cargoship reads.
const EnvPrefix = "CARGOSHIP_"

// Settings are the resolved tool settings: defaults, then the settings file,
// then CARGOSHIP_* variables; flags override them last.
type Settings struct {
	File              string // the settings file read, or ""
	LogLevel          string
	LogFormat         string
	TmpDir            string
	CacheDir          string
	Timeout           time.Duration
	Concurrency       int
	WorkerConcurrency int
	UpdateHosts       bool
	UpdateFirewall    bool
	Output            string
	OCIConcurrency    int
	// TrustedKeys are the settings file's trusted_keys, resolved against
	// its directory; RequireSignature is require_signature, and
	// RequiredBy where it was set, for refusals.
	TrustedKeys      []string
	RequireSignature bool
	RequiredBy       string
	// NoColor turns colour and progress bars off: no_color, NO_COLOR (any
	// value, as no-color.org has it) or CARGOSHIP_NO_COLOR; --no-color too.
	NoColor bool
	// Architecture is create's default architecture (architecture).
	Architecture string
	// SkipSBOM leaves the package's SBOM out (distro.create.skip_sbom).
	SkipSBOM bool
	// RegistryOverrides are create's default --registry-override items
	// (distro.create.registry_override).
	RegistryOverrides []string
	// Warnings are what loading found worth saying (a deprecated
	// variable); logged once the logger exists (App.logSettingsWarnings).
	Warnings []string
}

// DefaultSettings are what cargoship uses with no file and no variables.
func DefaultSettings() Settings {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return Settings{
		LogLevel:       "info",
		LogFormat:      "console",
		TmpDir:         os.TempDir(),
		CacheDir:       filepath.Join(cache, "cargoship"),
		Timeout:        20 * time.Minute,
		Concurrency:    30,
		OCIConcurrency: 6,
		Output:         ".",
	}
}

// LoadSettings resolves the settings. A missing file is normal; a file that
// exists but does not parse is an error naming its line.
func LoadSettings(getenv func(string) string) (Settings, error) {
	s := DefaultSettings()
	path, warnings, err := findSettingsFile(getenv)
	s.Warnings = warnings
	if err != nil {
		return s, err
	}
	if path != "" {
		doc, _, err := v1alpha1.LoadSettingsFile(path)
		if err != nil {
			return s, fmt.Errorf("settings file: %w", err)
		}
		if err := s.applyFile(path, doc); err != nil {
			return s, fmt.Errorf("settings file %s: %w", path, err)
		}
		s.File = path
	}
	if err := s.applyEnv(getenv); err != nil {
		return s, err
	}
	return s, nil
}

// SettingsEnv names the settings file; SettingsEnvDeprecated is its
// earlier name, still read (with a warning), since scripts set it: config
// is now the cluster document's word (-c/--config).
const (
	SettingsEnv           = EnvPrefix + "SETTINGS"
	SettingsEnvDeprecated = EnvPrefix + "CONFIG"
)

// findSettingsFile looks at CARGOSHIP_SETTINGS (else the deprecated
// CARGOSHIP_CONFIG), then ./cargoship-config.yaml, then the user config dir.
// The warnings say when the deprecated name was read or ignored.
func findSettingsFile(getenv func(string) string) (path string, warnings []string, err error) {
	named, old := getenv(SettingsEnv), getenv(SettingsEnvDeprecated)
	variable := SettingsEnv
	switch {
	case named != "" && old != "" && old != named:
		warnings = append(warnings, fmt.Sprintf("%s is deprecated and ignored: %s names the settings file", SettingsEnvDeprecated, SettingsEnv))
	case named != "" && old != "":
		warnings = append(warnings, fmt.Sprintf("%s is deprecated: %s names the settings file; unset %s", SettingsEnvDeprecated, SettingsEnv, SettingsEnvDeprecated))
	case old != "":
		named, variable = old, SettingsEnvDeprecated
		warnings = append(warnings, fmt.Sprintf("%s is deprecated: name the settings file with %s instead", SettingsEnvDeprecated, SettingsEnv))
	}
	if named != "" {
		if _, err := os.Stat(named); err != nil {
			return "", warnings, fmt.Errorf("%s names %s: %w", variable, named, err)
		}
		return named, warnings, nil
	}
	candidates := []string{SettingsFileName}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "cargoship", SettingsFileName))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, warnings, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", warnings, fmt.Errorf("settings file %s: %w", c, err)
		}
	}
	return "", warnings, nil
}

func (s *Settings) applyFile(path string, f *v1alpha1.Settings) error {
	for _, k := range f.TrustedKeys {
		s.TrustedKeys = append(s.TrustedKeys, v1alpha1.ResolveSettingsPath(path, k))
	}
	if f.RequireSignature {
		s.RequireSignature, s.RequiredBy = true, "require_signature in "+absPath(path)
	}
	setStr(&s.LogLevel, f.LogLevel)
	setStr(&s.LogFormat, f.LogFormat)
	setStr(&s.TmpDir, expandHome(f.TmpDir))
	setStr(&s.CacheDir, expandHome(f.ZarfCache))
	setStr(&s.CacheDir, expandHome(f.CacheDir))
	setStr(&s.Architecture, f.Architecture)
	s.NoColor = s.NoColor || f.NoColor
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil {
			return fmt.Errorf("timeout: %q is not a duration like 20m", f.Timeout)
		}
		s.Timeout = d
	}
	if f.Distro == nil {
		return nil
	}
	if f.Distro.OCIConcurrency > 0 {
		s.OCIConcurrency = f.Distro.OCIConcurrency
	}
	if c := f.Distro.Create; c != nil {
		setStr(&s.Output, expandHome(c.Output))
		s.SkipSBOM = c.SkipSBOM
		s.RegistryOverrides = c.RegistryOverride
	}
	if in := f.Distro.Install; in != nil {
		setPtr(&s.Concurrency, in.Concurrency)
		setPtr(&s.WorkerConcurrency, in.WorkerConcurrency)
		setPtr(&s.UpdateHosts, in.HostUpdate)
		setPtr(&s.UpdateFirewall, in.FirewallUpdate)
	}
	return nil
}

func (s *Settings) applyEnv(getenv func(string) string) error {
	str := map[string]*string{
		"LOG_LEVEL": &s.LogLevel, "LOG_FORMAT": &s.LogFormat, "TMP_DIR": &s.TmpDir, "CACHE_DIR": &s.CacheDir,
	}
	for k, p := range str {
		setStr(p, getenv(EnvPrefix+k))
	}
	ints := map[string]*int{"CONCURRENCY": &s.Concurrency, "WORKER_CONCURRENCY": &s.WorkerConcurrency}
	for k, p := range ints {
		if v := getenv(EnvPrefix + k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%s%s=%q: want a whole number, 0 or more", EnvPrefix, k, v)
			}
			*p = n
		}
	}
	bools := map[string]*bool{"UPDATE_HOSTS": &s.UpdateHosts, "UPDATE_FIREWALL": &s.UpdateFirewall}
	for k, p := range bools {
		if v := getenv(EnvPrefix + k); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s%s=%q: want true or false", EnvPrefix, k, v)
			}
			*p = b
		}
	}
	// NO_COLOR turns colour off whatever its value (no-color.org);
	// CARGOSHIP_NO_COLOR is a setting like any other, so false turns it on
	// again over the file's no_color.
	if getenv("NO_COLOR") != "" {
		s.NoColor = true
	} else if v := getenv(EnvPrefix + "NO_COLOR"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%sNO_COLOR=%q: want true or false", EnvPrefix, v)
		}
		s.NoColor = b
	}
	if v := getenv(EnvPrefix + "REQUIRE_SIGNATURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%sREQUIRE_SIGNATURE=%q: want true or false", EnvPrefix, v)
		}
		s.RequireSignature, s.RequiredBy = b, EnvPrefix+"REQUIRE_SIGNATURE"
	}
	if v := getenv(EnvPrefix + "TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%sTIMEOUT=%q: want a duration like 20m", EnvPrefix, v)
		}
		s.Timeout = d
	}
	return nil
}

func setStr(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func setPtr[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return os.ExpandEnv(p)
}

// trustPolicy is one run's trust policy (docs/package.md, "Trusting
// packages"): the --verify-key keys when any are given, as every flag wins
// over its setting, else the settings file's trusted_keys; and
// require_signature.
func (s Settings) trustPolicy(verifyKeys []string) (pkgfile.TrustPolicy, error) {
	t := pkgfile.TrustPolicy{RequireSignature: s.RequireSignature, RequiredBy: s.RequiredBy}
	if len(verifyKeys) > 0 {
		for _, p := range verifyKeys {
			k, err := pkgfile.LoadTrustedKey(p, "--verify-key "+p)
			if err != nil {
				return t, fmt.Errorf("--verify-key: %w", err)
			}
			t.Keys = append(t.Keys, k)
		}
		return t, nil
	}
	for i, p := range s.TrustedKeys {
		k, err := pkgfile.LoadTrustedKey(p, fmt.Sprintf("trusted_keys[%d] in %s", i, absPath(s.File)))
		if err != nil {
			return t, fmt.Errorf("settings file %s: trusted_keys[%d]: %w", s.File, i, err)
		}
		t.Keys = append(t.Keys, k)
	}
	return t, nil
}

// logSettingsWarnings logs what loading the settings found worth saying,
// once: the logger is made after the settings it is configured by.
func (a *App) logSettingsWarnings() {
	for _, w := range a.Settings.Warnings {
		a.Log.Warn(w)
	}
	a.Settings.Warnings = nil
}

// colorOn reports whether cmd may draw colour and progress bars on w: w is
// a terminal that can redraw (not TERM=dumb), and neither --no-color nor
// the no_color setting (NO_COLOR, CARGOSHIP_NO_COLOR) turned them off.
func (a *App) colorOn(cmd *cobra.Command, w io.Writer) bool {
	flag, _ := cmd.Flags().GetBool("no-color") // a persistent flag of the root: always there
	if a.LookupEnv != nil {
		if t, _ := a.LookupEnv("TERM"); t == "dumb" {
			return false
		}
	}
	return cslog.Color(w, flag || a.Settings.NoColor)
}

// absPath names a file for a message read from another directory.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
