package v1alpha1

// Engine types a distro definition may name.
const (
	EngineK3s      = "k3s"
	EngineRKE2     = "rke2"
	EngineUpstream = "upstream"
)

// Engines lists every supported spec.type.
var Engines = []string{EngineK3s, EngineRKE2, EngineUpstream}

// Install routes a file selector may name (docs/apply.md, phases 15-17 and
// "Install routes").
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
	// APIVersion is zarf.dev/v1alpha1 (the default) or colonel-byte.dev/v1alpha1.
	APIVersion string `json:"apiVersion,omitempty" jsonschema:"enum=zarf.dev/v1alpha1,enum=colonel-byte.dev/v1alpha1"`
	// Kind is ZarfDistro.
	Kind string `json:"kind" jsonschema:"enum=ZarfDistro"`
	// Metadata names the package and what it is built for.
	Metadata DistroMetadata `json:"metadata"`
	// Build is written by create into the package; leave it out of a definition.
	Build *Build `json:"build,omitempty"`
	// Spec is the engine, its version and its configuration.
	Spec DistroSpec `json:"spec"`

	// src is the document the definition was loaded from, so checks
	// with an inventory can point at its lines; nil when not a file.
	src *document
}

// DistroMetadata names the package and what it is built for.
type DistroMetadata struct {
	// Name is the package's name, in its file name.
	Name string `json:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9\\-]*$"`
	// Description is free text for people.
	Description string `json:"description,omitempty"`
	// Version is the package's version, in its file name (default spec.version): letters, digits, '.', '_', '+' and '-'.
	Version string `json:"version,omitempty" jsonschema:"pattern=^[A-Za-z0-9_+][A-Za-z0-9._+-]*$"`
	// Architecture is the single architecture of the earlier tool's form.
	Architecture string `json:"architecture,omitempty" jsonschema:"enum=amd64,enum=arm64"`
	// Architectures builds one package for several architectures ("multi").
	Architectures []string `json:"architectures,omitempty"`
	// Uncompressed writes a plain .tar instead of .tar.zst.
	Uncompressed bool `json:"uncompressed,omitempty"`
	// Annotations are free notes carried into the package.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Build is written by `cargoship create`; values in a definition are replaced.
type Build struct {
	// Architectures are the architectures the package carries.
	Architectures []string `json:"architectures,omitempty"`
	// Architecture is the single architecture, when there is one.
	Architecture string `json:"architecture,omitempty"`
	// Timestamp is when the package was built (RFC 3339).
	Timestamp string `json:"timestamp,omitempty"`
	// Version is metadata.version, or spec.version.
	Version string `json:"version,omitempty"`
	// ToolVersion is the cargoship version that built the package.
	ToolVersion string `json:"toolVersion,omitempty"`
	// RegistryOverrides are registry rewrites applied while pulling images.
	RegistryOverrides map[string]string `json:"registryOverrides,omitempty"`
}

// DistroSpec is the engine, its version and its configuration.
type DistroSpec struct {
	// Type is the engine: k3s, rke2 or upstream (kubeadm).
	Type string `json:"type" jsonschema:"enum=k3s,enum=rke2,enum=upstream"`
	// Version is the engine version hosts are installed or upgraded to, e.g. 1.35.3-k3s1.
	Version string `json:"version"`
	// Actions are commands run on the machine that runs create.
	Actions *Actions `json:"actions,omitempty"`
	// Config is everything the package installs and configures.
	Config DistroConfig `json:"config,omitempty"`
}

// Actions are commands run on the machine that creates the package.
type Actions struct {
	// OnCreate runs before (fetching), after (images), onSuccess and onFailure.
	OnCreate *ActionSet `json:"onCreate,omitempty"`
}

// ActionSet follows Zarf's component action set, for compatibility.
type ActionSet struct {
	// Defaults apply to every action of the set.
	Defaults *ActionDefaults `json:"defaults,omitempty"`
	// Before runs before any file is fetched.
	Before []Action `json:"before,omitempty"`
	// After runs after images are pulled.
	After []Action `json:"after,omitempty"`
	// OnSuccess runs after the package is written.
	OnSuccess []Action `json:"onSuccess,omitempty"`
	// OnFailure runs when create fails.
	OnFailure []Action `json:"onFailure,omitempty"`
}

// ActionDefaults apply to every action of a set.
type ActionDefaults struct {
	// Dir is the working directory, relative to the definition's.
	Dir string `json:"dir,omitempty"`
	// Env are NAME=value pairs added to every action's environment.
	Env []string `json:"env,omitempty"`
	// MaxRetries is how often a failed action is retried.
	MaxRetries int `json:"maxRetries,omitempty"`
	// MaxTotalSeconds limits one action, retries included (0: no limit).
	MaxTotalSeconds int `json:"maxTotalSeconds,omitempty"`
	// Mute hides the commands' output.
	Mute bool `json:"mute,omitempty"`
	// Shell picks the shell; create uses linux (default sh).
	Shell *ActionShell `json:"shell,omitempty"`
}

// ActionShell picks the shell per operating system.
type ActionShell struct {
	// Linux is the shell create runs commands with (default sh).
	Linux string `json:"linux,omitempty"`
	// Darwin is Zarf's macOS shell; accepted, not used.
	Darwin string `json:"darwin,omitempty"`
	// Windows is Zarf's Windows shell; accepted, not used.
	Windows string `json:"windows,omitempty"`
}

// Action is one command.
type Action struct {
	// Cmd is the command line (required).
	Cmd string `json:"cmd,omitempty"`
	// Description is what messages call the action.
	Description string `json:"description,omitempty"`
	// Dir is the working directory, relative to the definition's.
	Dir string `json:"dir,omitempty"`
	// Env are NAME=value pairs for this action.
	Env []string `json:"env,omitempty"`
	// MaxRetries is how often the action is retried after a failure.
	MaxRetries int `json:"maxRetries,omitempty"`
	// MaxTotalSeconds limits the action, retries included.
	MaxTotalSeconds int `json:"maxTotalSeconds,omitempty"`
	// Mute hides the command's output.
	Mute bool `json:"mute,omitempty"`
	// Shell picks the shell for this action.
	Shell *ActionShell `json:"shell,omitempty"`
	// SetVariable needs Zarf package variables; refused.
	SetVariable string `json:"setVariable,omitempty"`
	// SetVariables needs Zarf package variables; refused.
	SetVariables []any `json:"setVariables,omitempty"`
	// SetValues needs Zarf package values; refused.
	SetValues []any `json:"setValues,omitempty"`
	// Template needs Zarf package variables; refused when true.
	Template bool `json:"template,omitempty"`
	// Wait is Zarf's wait action; create has no cluster, so it is refused.
	Wait map[string]any `json:"wait,omitempty"`
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
	// KubeVIP names the kube-vip image for clusters whose VIP provider is kube-vip.
	KubeVIP *DistroKubeVIP `json:"kubeVip,omitempty"`
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
	// Sysctl are kernel parameters set on every host (/etc/sysctl.d/zzz-cargoship.conf).
	Sysctl map[string]string `json:"sysctl,omitempty"`
	// Fapolicyd is a fapolicyd rules file, written to 80-cargoship.rules.
	Fapolicyd string `json:"fapolicyd,omitempty"`
	// FapolicydExecutable is written to 81-cargoship-executable.rules.
	FapolicydExecutable string `json:"fapolicydExecutable,omitempty"`
	// SELinux is policy installed on hosts where SELinux is enabled (enforcing or permissive).
	SELinux *SELinux `json:"selinux,omitempty"`
	// Files are the engine install files, chosen per host by selector.
	Files []File `json:"files,omitempty"`
}

// SELinux is the policy cargoship installs on hosts with SELinux enabled (phase 11).
type SELinux struct {
	// Modules are policy modules installed with semodule -i.
	Modules []SELinuxModule `json:"modules,omitempty"`
	// Booleans are set persistently (setsebool -P).
	Booleans map[string]bool `json:"booleans,omitempty"`
	// FileContexts label path patterns (semanage fcontext).
	FileContexts []SELinuxFileContext `json:"fileContexts,omitempty"`
}

// SELinuxModule is a policy module (.pp or .cil) carried in the package.
type SELinuxModule struct {
	// Name is the module's name, as semodule -l lists it.
	Name string `json:"name"`
	// Source is a .pp, .cil or .pp.bz2 file: a path or URL.
	Source string `json:"source"`
	// Shasum is the SHA-256 the fetched module must have.
	Shasum string `json:"shasum,omitempty"`
	// Priority is the module priority (default: semodule's).
	Priority int `json:"priority,omitempty"`
}

// SELinuxFileContext labels a path pattern (semanage fcontext -a -t).
type SELinuxFileContext struct {
	// Path is an absolute path pattern, e.g. /var/lib/rancher(/.*)?.
	Path string `json:"path"`
	// Type is an SELinux type ending in _t.
	Type string `json:"type"`
}

// File is one file the package carries.
type File struct {
	// Name names the file in messages.
	Name string `json:"name,omitempty"`
	// Source is a path (relative to the definition) or an http(s) URL; set source or data.
	Source string `json:"source,omitempty"`
	// Target is the absolute path on hosts.
	Target string `json:"target,omitempty"`
	// ExtractPath takes one entry out of the source archive.
	ExtractPath string `json:"extractPath,omitempty"`
	// Shasum is the SHA-256 the fetched file must have.
	Shasum string `json:"shasum,omitempty"`
	// Executable marks a program: mode 0755 unless perm says otherwise.
	Executable bool `json:"executable,omitempty"`
	// IsDirectory makes target a directory the file goes into.
	IsDirectory bool `json:"isDirectory,omitempty"`
	// Selector picks the hosts that get the file.
	Selector *Selector `json:"selector,omitempty"`
	// Symlinks are links to target created on the host.
	Symlinks []string `json:"symlinks,omitempty"`
	// Perm is the octal mode (default 0644, or 0755 when executable).
	Perm FileMode `json:"perm,omitempty"`
	// User is the owner: a name or numeric id.
	User string `json:"user,omitempty"`
	// Group is the group: a name or numeric id.
	Group string `json:"group,omitempty"`
	// Data is the file's content, inline.
	Data string `json:"data,omitempty"`
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
	Architecture string `json:"architecture,omitempty" jsonschema:"enum=amd64,enum=arm64"`
	// Roles is the earlier tool's field; accepted, not used.
	Roles []string `json:"roles,omitempty"`
}

// ImageConfig lists the images the package carries and where they go.
type ImageConfig struct {
	// Images are pulled at create time; write them fully qualified.
	Images []string `json:"images,omitempty"`
	// Path is where image archives go on hosts (default: the engine's images directory).
	Path string `json:"path,omitempty"`
	// Compression of the image archive: none (the default), gz or zstd.
	Compression string `json:"compression,omitempty" jsonschema:"enum=none,enum=gz,enum=zstd"`
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
