package v1alpha1

// API versions and kinds the loaders accept. The earlier tool wrote
// zarf.dev/v1alpha1 documents; they stay loadable unchanged.
const (
	GroupVersion       = "colonel-byte.dev/v1alpha1"
	LegacyGroupVersion = "zarf.dev/v1alpha1"

	KindCluster       = "Cluster"
	KindLegacyCluster = "ZarfCluster"
	KindDistro        = "ZarfDistro"
)

// Cluster is the inventory `cargoship apply --config` takes: where the hosts
// are, how to reach them, and what role each plays.
type Cluster struct {
	APIVersion string          `json:"apiVersion,omitempty" jsonschema:"enum=colonel-byte.dev/v1alpha1,enum=zarf.dev/v1alpha1"`
	Kind       string          `json:"kind" jsonschema:"enum=Cluster,enum=ZarfCluster"`
	Metadata   ClusterMetadata `json:"metadata"`
	Spec       ClusterSpec     `json:"spec"`
}

// ClusterMetadata names the cluster.
type ClusterMetadata struct {
	Name        string            `json:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9\\-]*$"`
	Description string            `json:"description,omitempty"`
	Version     string            `json:"version,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ClusterSpec is the cluster-wide configuration and the host list.
type ClusterSpec struct {
	Config ClusterConfig `json:"config"`
	Hosts  []Host        `json:"hosts" jsonschema:"minItems=1"`
}

// ClusterConfig is what every host of the cluster shares.
type ClusterConfig struct {
	// Loadbalancer is the address clients and joining nodes use to reach the
	// API: a VIP, a DNS name or one controller's address.
	Loadbalancer string `json:"loadbalancer"`
	// Registries become the engine's registries.yaml (mirrors and auth).
	Registries []Registry `json:"registries,omitempty"`
	// Profiles are named bundles of engine and kubelet settings a host opts
	// into with its profile field.
	Profiles []Profile `json:"profiles,omitempty"`
	// Firewall applies to every host when the firewall phase is enabled.
	Firewall *Firewall `json:"firewall,omitempty"`
}

// Registry is one upstream registry and how nodes reach it.
type Registry struct {
	// Name is the registry host as images name it, e.g. docker.io.
	Name string `json:"name"`
	// Proxy is the earlier tool's single-mirror form.
	Proxy *RegistryProxy `json:"proxy,omitempty"`
	// Mirrors are endpoints tried in order before Name itself.
	Mirrors []string      `json:"mirrors,omitempty"`
	Auth    *RegistryAuth `json:"auth,omitempty"`
	TLS     *RegistryTLS  `json:"tls,omitempty"`
}

// RegistryProxy is a pull-through mirror.
type RegistryProxy struct {
	URL string `json:"url"`
}

// RegistryAuth are credentials for a registry. Prefer passEnv: a password in
// the document lives in every copy of the document.
type RegistryAuth struct {
	User    string `json:"user,omitempty"`
	Pass    string `json:"pass,omitempty"`
	PassEnv string `json:"passEnv,omitempty"`
	Token   string `json:"token,omitempty"`
}

// RegistryTLS configures how nodes verify a registry.
type RegistryTLS struct {
	CAFile             string `json:"caFile,omitempty"`
	CertFile           string `json:"certFile,omitempty"`
	KeyFile            string `json:"keyFile,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
}

// Profile is a named set of engine and kubelet settings merged into the
// config of every host whose profile names it.
type Profile struct {
	Name          string         `json:"name"`
	EngineConfig  map[string]any `json:"engineConfig,omitempty"`
	KubeletConfig map[string]any `json:"kubeletConfig,omitempty"`
}

// Firewall is the set of ports to open and rules to apply.
type Firewall struct {
	Ports []Port         `json:"ports,omitempty"`
	Rules []FirewallRule `json:"rules,omitempty"`
}

// Port is one port, or a range "30000-32767", and its protocol.
type Port struct {
	Port     PortValue `json:"port"`
	Protocol string    `json:"protocol,omitempty" jsonschema:"enum=tcp,enum=udp"`
}

// FirewallRule admits (or drops) traffic from a source to a port.
type FirewallRule struct {
	Name     string    `json:"name,omitempty"`
	Source   string    `json:"source,omitempty"`
	Port     PortValue `json:"port,omitempty"`
	Protocol string    `json:"protocol,omitempty" jsonschema:"enum=tcp,enum=udp"`
	Action   string    `json:"action,omitempty" jsonschema:"enum=accept,enum=drop,enum=reject"`
}
