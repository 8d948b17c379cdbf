package v1alpha1

import (
	"slices"
	"time"
)

// Settings is the optional tool settings file, cargoship-config.yaml. Its
// keys are the earlier tool's, so an existing file keeps working; cache_dir
// replaces zarf_cache, which is still read.
type Settings struct {
	LogLevel     string          `json:"log_level,omitempty" jsonschema:"enum=debug,enum=info,enum=warn,enum=error,enum=trace"`
	LogFormat    string          `json:"log_format,omitempty" jsonschema:"enum=console,enum=text,enum=json,enum=dev"`
	TmpDir       string          `json:"tmp_dir,omitempty"`
	CacheDir     string          `json:"cache_dir,omitempty"`
	ZarfCache    string          `json:"zarf_cache,omitempty"`
	Timeout      string          `json:"timeout,omitempty"`
	NoColor      bool            `json:"no_color,omitempty"`
	Architecture string          `json:"architecture,omitempty" jsonschema:"enum=amd64,enum=arm64"`
	Distro       *DistroSettings `json:"distro,omitempty"`
}

// DistroSettings groups the per-command defaults.
type DistroSettings struct {
	OCIConcurrency int              `json:"oci_concurrency,omitempty"`
	Create         *CreateSettings  `json:"create,omitempty"`
	Install        *InstallSettings `json:"install,omitempty"`
	Deploy         map[string]any   `json:"deploy,omitempty"`
}

// CreateSettings are defaults for `cargoship create`.
type CreateSettings struct {
	Output           string   `json:"output,omitempty"`
	SkipSBOM         bool     `json:"skip_sbom,omitempty"`
	RegistryOverride []string `json:"registry_override,omitempty"`
}

// InstallSettings are defaults for apply, prepare and reset. Pointers tell
// "not set" from false and 0.
type InstallSettings struct {
	Concurrency       *int  `json:"concurrency,omitempty"`
	WorkerConcurrency *int  `json:"worker_concurrency,omitempty"`
	HostUpdate        *bool `json:"host_update,omitempty"`
	FirewallUpdate    *bool `json:"firewall_update,omitempty"`
}

// ParseSettings decodes a settings file strictly, with located errors.
func ParseSettings(file string, data []byte) (*Settings, Findings, error) {
	s := &Settings{}
	d, ok := decodeAny(file, data, s)
	if ok {
		validateSettings(d, s)
	}
	return result(s, d)
}

// LoadSettingsFile reads and decodes a settings file.
func LoadSettingsFile(path string) (*Settings, Findings, error) {
	data, err := readDocument(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseSettings(path, data)
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
