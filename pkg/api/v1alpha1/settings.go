package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Settings is the optional tool settings file, cargoship-config.yaml. Its
// keys are the earlier tool's, so an existing file keeps working; cache_dir
// replaces zarf_cache, which is still read.
type Settings struct {
	// LogLevel is debug, info (the default), warn, error or trace.
	LogLevel string `json:"log_level,omitempty" jsonschema:"enum=debug,enum=info,enum=warn,enum=error,enum=trace"`
	// LogFormat is console (the default), text, json or dev.
	LogFormat string `json:"log_format,omitempty" jsonschema:"enum=console,enum=text,enum=json,enum=dev"`
	// TmpDir is where temporary files go (default: the system's).
	TmpDir string `json:"tmp_dir,omitempty"`
	// CacheDir holds downloads and image blobs (default: the user cache dir).
	CacheDir string `json:"cache_dir,omitempty"`
	// ZarfCache is the earlier name of cache_dir; cache_dir wins.
	ZarfCache string `json:"zarf_cache,omitempty"`
	// Timeout limits one apply, prepare or reset run (default 20m).
	Timeout string `json:"timeout,omitempty"`
	// NoColor turns colour and progress bars off, as --no-color and NO_COLOR do.
	NoColor bool `json:"no_color,omitempty"`
	// Architecture is create's default architecture (--architecture wins); it
	// replaces the definition's architectures.
	Architecture string `json:"architecture,omitempty" jsonschema:"enum=amd64,enum=arm64"`
	// TrustedKeys are the ed25519 public key files (PEM, from cargoship
	// keygen) a package may be signed by; relative paths are read from this
	// file's directory. Any key makes apply, prepare, inspect and reset
	// refuse a package no trusted key signed.
	TrustedKeys []string `json:"trusted_keys,omitempty"`
	// RequireSignature refuses an unsigned package even when no key is trusted.
	RequireSignature bool `json:"require_signature,omitempty"`
	// Distro groups the per-command defaults.
	Distro *DistroSettings `json:"distro,omitempty"`
}

// DistroSettings groups the per-command defaults.
type DistroSettings struct {
	// OCIConcurrency is how many downloads and pulls create runs at once (default 6).
	OCIConcurrency int `json:"oci_concurrency,omitempty"`
	// Create are defaults for cargoship create.
	Create *CreateSettings `json:"create,omitempty"`
	// Install are defaults for apply, prepare and reset.
	Install *InstallSettings `json:"install,omitempty"`
	// Deploy is the earlier tool's; accepted, not used.
	Deploy map[string]any `json:"deploy,omitempty"`
}

// CreateSettings are defaults for `cargoship create`.
type CreateSettings struct {
	// Output is the directory packages are written to (default .).
	Output string `json:"output,omitempty"`
	// SkipSBOM leaves the package's SBOM out (create --skip-sbom).
	SkipSBOM bool `json:"skip_sbom,omitempty"`
	// RegistryOverride pulls images through mirrors, registry=replacement
	// (docker.io=mirror.internal:5000); the package keeps the original
	// names. create --registry-override replaces the list.
	RegistryOverride []string `json:"registry_override,omitempty"`
}

// InstallSettings are defaults for apply, prepare and reset. Pointers tell
// "not set" from false and 0.
type InstallSettings struct {
	// Concurrency is how many hosts are worked on at once (default 30; 0: all).
	Concurrency *int `json:"concurrency,omitempty"`
	// WorkerConcurrency is how many workers start or upgrade at once (default 0: all).
	WorkerConcurrency *int `json:"worker_concurrency,omitempty"`
	// HostUpdate writes every node into /etc/hosts (apply -H).
	HostUpdate *bool `json:"host_update,omitempty"`
	// FirewallUpdate configures the hosts' firewalls (apply -F).
	FirewallUpdate *bool `json:"firewall_update,omitempty"`
}

// ParseSettings decodes a settings file strictly, with located errors. It
// reads no other file; LoadSettingsFile also checks the trusted keys.
func ParseSettings(file string, data []byte) (*Settings, Findings, error) {
	return parseSettings(file, data, false)
}

// LoadSettingsFile reads and decodes a settings file, and reads every
// trusted key it names: a key that cannot be read is an error at its line.
func LoadSettingsFile(path string) (*Settings, Findings, error) {
	data, err := readDocument(path)
	if err != nil {
		return nil, nil, err
	}
	return parseSettings(path, data, true)
}

func parseSettings(file string, data []byte, readKeys bool) (*Settings, Findings, error) {
	s := &Settings{}
	d, ok := decodeAny(file, data, s)
	if ok {
		validateSettings(d, s)
		validateTrust(d, s, readKeys)
	}
	return result(s, d)
}

// Log levels and formats a settings file may name.
var (
	LogLevels  = []string{"debug", "info", "warn", "error", "trace"}
	LogFormats = []string{"console", "text", "json", "dev"}
)

func validateSettings(d *document, s *Settings) {
	if s.LogLevel != "" && !slices.Contains(LogLevels, s.LogLevel) {
		d.errorf("log_level", "%q is not one of %s", s.LogLevel, quoteList(LogLevels))
	}
	if s.LogFormat != "" && !slices.Contains(LogFormats, s.LogFormat) {
		d.errorf("log_format", "%q is not one of %s", s.LogFormat, quoteList(LogFormats))
	}
	if s.Timeout != "" {
		if t, err := time.ParseDuration(s.Timeout); err != nil || t < 0 {
			d.errorf("timeout", "%q is not a duration like 20m or 1h30m", s.Timeout)
		}
	}
	if s.Architecture != "" && !slices.Contains(Architectures, s.Architecture) {
		d.errorf("architecture", "%q is not one of %s", s.Architecture, quoteList(Architectures))
	}
	if s.Distro == nil {
		return
	}
	if s.Distro.OCIConcurrency < 0 {
		d.errorf("distro.oci_concurrency", "must be 0 (the default) or more")
	}
	if c := s.Distro.Create; c != nil {
		for i, o := range c.RegistryOverride {
			if from, to, ok := strings.Cut(o, "="); !ok || strings.TrimSpace(from) == "" || strings.TrimSpace(to) == "" || strings.Contains(to, "=") {
				d.errorf(fmt.Sprintf("distro.create.registry_override[%d]", i), "%q is not registry=replacement, like docker.io=mirror.internal:5000", o)
			}
		}
	}
	if s.Distro.Install == nil {
		return
	}
	in := s.Distro.Install
	if in.Concurrency != nil && *in.Concurrency < 0 {
		d.errorf("distro.install.concurrency", "must be 0 (unlimited) or more")
	}
	if in.WorkerConcurrency != nil && *in.WorkerConcurrency < 0 {
		d.errorf("distro.install.worker_concurrency", "must be 0 (unlimited) or more")
	}
}
