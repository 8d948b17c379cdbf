package v1alpha1

// Engine types a distro definition may name.
const (
	EngineK3s      = "k3s"
	EngineRKE2     = "rke2"
	EngineUpstream = "upstream"
)

// Engines lists every supported spec.type.
var Engines = []string{EngineK3s, EngineRKE2, EngineUpstream}

// Install routes a file selector may name (seeds/003 phases 15-17).
const (
	RouteRPM    = "rpm"
	RouteAPT    = "apt"
	RouteBinary = "binary"
)

// Routes lists every valid selector.package value.
var Routes = []string{RouteRPM, RouteAPT, RouteBinary}

// OS families a file selector may name.
const (
	FamilyEnterpriseLinux = "enterpriselinux"
	FamilyDebian          = "debian"
	FamilySUSE            = "suse"
	FamilyAlpine          = "alpine"
	FamilyOther           = "other"
)

// Families lists every valid selector.os value.
var Families = []string{FamilyEnterpriseLinux, FamilyDebian, FamilySUSE, FamilyAlpine, FamilyOther}

// Architectures cargoship can package for.
var Architectures = []string{"amd64", "arm64"}

// Image archive compressions.
var Compressions = []string{"none", "gz", "zstd"}

// Distro is a distro definition: what `cargoship create` turns into a
// package, and what the package carries back as its resolved definition.
type Distro struct {
	APIVersion string         `json:"apiVersion,omitempty" jsonschema:"enum=zarf.dev/v1alpha1,enum=colonel-byte.dev/v1alpha1"`
	Kind       string         `json:"kind" jsonschema:"enum=ZarfDistro"`
	Metadata   DistroMetadata `json:"metadata"`
	Build      *Build         `json:"build,omitempty"`
	Spec       DistroSpec     `json:"spec"`
}

// DistroMetadata names the package and what it is built for.
type DistroMetadata struct {
	Name        string `json:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9\\-]*$"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	// Architecture is the single architecture of the earlier tool's form.
	Architecture string `json:"architecture,omitempty" jsonschema:"enum=amd64,enum=arm64"`
	// Architectures builds one package for several architectures ("multi").
	Architectures []string          `json:"architectures,omitempty"`
	Uncompressed  bool              `json:"uncompressed,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Build is written by `cargoship create`; values in a definition are replaced.
type Build struct {
	Architectures     []string          `json:"architectures,omitempty"`
	Architecture      string            `json:"architecture,omitempty"`
	Timestamp         string            `json:"timestamp,omitempty"`
	Version           string            `json:"version,omitempty"`
	ToolVersion       string            `json:"toolVersion,omitempty"`
	RegistryOverrides map[string]string `json:"registryOverrides,omitempty"`
}

// DistroSpec is the engine, its version and its configuration.
type DistroSpec struct {
	Type    string       `json:"type" jsonschema:"enum=k3s,enum=rke2,enum=upstream"`
	Version string       `json:"version"`
	Actions *Actions     `json:"actions,omitempty"`
	Config  DistroConfig `json:"config,omitempty"`
}

// Actions are commands run on the machine that creates the package.
type Actions struct {
	OnCreate *ActionSet `json:"onCreate,omitempty"`
}

// ActionSet follows Zarf's component action set, for compatibility.
type ActionSet struct {
	Defaults  *ActionDefaults `json:"defaults,omitempty"`
	Before    []Action        `json:"before,omitempty"`
	After     []Action        `json:"after,omitempty"`
	OnSuccess []Action        `json:"onSuccess,omitempty"`
	OnFailure []Action        `json:"onFailure,omitempty"`
}

// ActionDefaults apply to every action of a set.
type ActionDefaults struct {
	Dir             string       `json:"dir,omitempty"`
	Env             []string     `json:"env,omitempty"`
	MaxRetries      int          `json:"maxRetries,omitempty"`
	MaxTotalSeconds int          `json:"maxTotalSeconds,omitempty"`
	Mute            bool         `json:"mute,omitempty"`
	Shell           *ActionShell `json:"shell,omitempty"`
}

// ActionShell picks the shell per operating system.
type ActionShell struct {
	Linux   string `json:"linux,omitempty"`
	Darwin  string `json:"darwin,omitempty"`
	Windows string `json:"windows,omitempty"`
}

// Action is one command.
type Action struct {
	Cmd             string         `json:"cmd,omitempty"`
	Description     string         `json:"description,omitempty"`
	Dir             string         `json:"dir,omitempty"`
	Env             []string       `json:"env,omitempty"`
	MaxRetries      int            `json:"maxRetries,omitempty"`
	MaxTotalSeconds int            `json:"maxTotalSeconds,omitempty"`
	Mute            bool           `json:"mute,omitempty"`
	Shell           *ActionShell   `json:"shell,omitempty"`
	SetVariable     string         `json:"setVariable,omitempty"`
	SetVariables    []any          `json:"setVariables,omitempty"`
	SetValues       []any          `json:"setValues,omitempty"`
	Template        bool           `json:"template,omitempty"`
	Wait            map[string]any `json:"wait,omitempty"`
}

// DistroConfig is everything the package installs and configures.
type DistroConfig struct {
	Engine EngineConfig `json:"engine,omitempty"`
	OS     OSConfig     `json:"os,omitempty"`
	// Files go to every host (distro-agnostic files, phase 14).
	Files []File `json:"files,omitempty"`
	// Manifests are raw Kubernetes manifests (a CNI, typically) applied from
	// the leader with the engine's kubectl (phase 21).
	Manifests   []File      `json:"manifests,omitempty"`
	ImageConfig ImageConfig `json:"imageConfig,omitempty"`
}

// EngineConfig is the engine's own configuration.
type EngineConfig struct {
	// Config is the body of the engine's config.yaml, shared by every node
	// and adjusted per node.
	Config map[string]any `json:"config,omitempty"`
	// Audit is the body of an audit.k8s.io/v1 Policy.
	Audit map[string]any `json:"audit,omitempty"`
	// PodSecurity is the body of an apiserver.config.k8s.io/v1
	// AdmissionConfiguration.
	PodSecurity map[string]any `json:"podSecurity,omitempty"`
	// Manifest maps a packaged Helm chart's name to its values (YAML text or
	// a mapping); each becomes a HelmChartConfig on controllers.
	Manifest map[string]any `json:"manifest,omitempty"`
	// Registries is a registries.yaml body merged under the cluster's
	// registries.
	Registries map[string]any `json:"registries,omitempty"`
}

// OSConfig prepares the operating system.
type OSConfig struct {
	Sysctl map[string]string `json:"sysctl,omitempty"`
	// Fapolicyd is a fapolicyd rules file, written to 31-cargoship.rules.
	Fapolicyd string `json:"fapolicyd,omitempty"`
	// FapolicydExecutable is written to 32-cargoship-executable.rules.
	FapolicydExecutable string   `json:"fapolicydExecutable,omitempty"`
	SELinux             *SELinux `json:"selinux,omitempty"`
	// Files are the engine install files, chosen per host by selector.
	Files []File `json:"files,omitempty"`
}

// SELinux is the policy cargoship installs on enforcing hosts (phase 11).
type SELinux struct {
	Modules      []SELinuxModule      `json:"modules,omitempty"`
	Booleans     map[string]bool      `json:"booleans,omitempty"`
	FileContexts []SELinuxFileContext `json:"fileContexts,omitempty"`
}

// SELinuxModule is a policy module (.pp or .cil) carried in the package.
type SELinuxModule struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Shasum   string `json:"shasum,omitempty"`
	Priority int    `json:"priority,omitempty"`
}

// SELinuxFileContext labels a path pattern (semanage fcontext -a -t).
type SELinuxFileContext struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// File is one file the package carries.
type File struct {
	Name        string    `json:"name,omitempty"`
	Source      string    `json:"source,omitempty"`
	Target      string    `json:"target,omitempty"`
	ExtractPath string    `json:"extractPath,omitempty"`
	Shasum      string    `json:"shasum,omitempty"`
	Executable  bool      `json:"executable,omitempty"`
	IsDirectory bool      `json:"isDirectory,omitempty"`
	Selector    *Selector `json:"selector,omitempty"`
	Symlinks    []string  `json:"symlinks,omitempty"`
	Perm        FileMode  `json:"perm,omitempty"`
	User        string    `json:"user,omitempty"`
	Group       string    `json:"group,omitempty"`
	Data        string    `json:"data,omitempty"`
}

// Selector picks which hosts get a file.
type Selector struct {
	// Package is the install route: rpm, apt or binary.
	Package string `json:"package,omitempty" jsonschema:"enum=rpm,enum=apt,enum=binary"`
	// Profile limits a file to controller-type hosts or workers.
	Profile string `json:"profile,omitempty" jsonschema:"enum=controller,enum=worker"`
	// OS limits a file to one OS family.
	OS string `json:"os,omitempty" jsonschema:"enum=enterpriselinux,enum=debian,enum=suse,enum=alpine,enum=other"`
	// Architecture limits a file to one architecture of a multi package.
	Architecture string   `json:"architecture,omitempty" jsonschema:"enum=amd64,enum=arm64"`
	Roles        []string `json:"roles,omitempty"`
}

// ImageConfig lists the images the package carries and where they go.
type ImageConfig struct {
	Images      []string `json:"images,omitempty"`
	Path        string   `json:"path,omitempty"`
	Compression string   `json:"compression,omitempty" jsonschema:"enum=none,enum=gz,enum=zstd"`
}

// Architectures returns the architectures the definition builds for.
func (d *Distro) Arches() []string {
	if d.Build != nil && len(d.Build.Architectures) > 0 {
		return d.Build.Architectures
	}
	if len(d.Metadata.Architectures) > 0 {
		return d.Metadata.Architectures
	}
	if d.Metadata.Architecture != "" {
		return []string{d.Metadata.Architecture}
	}
	return nil
}
