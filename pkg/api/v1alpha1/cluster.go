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
	// APIVersion is colonel-byte.dev/v1alpha1 (the default) or the earlier zarf.dev/v1alpha1.
	APIVersion string `json:"apiVersion,omitempty" jsonschema:"enum=colonel-byte.dev/v1alpha1,enum=zarf.dev/v1alpha1"`
	// Kind is Cluster, or the earlier ZarfCluster.
	Kind string `json:"kind" jsonschema:"enum=Cluster,enum=ZarfCluster"`
	// Metadata names the cluster.
	Metadata ClusterMetadata `json:"metadata"`
	// Spec is the cluster-wide configuration and the host list.
	Spec ClusterSpec `json:"spec"`
}

// ClusterMetadata names the cluster.
type ClusterMetadata struct {
	// Name is the cluster's name: lower-case letters, digits and hyphens.
	Name string `json:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9\\-]*$"`
	// Description is free text for people.
	Description string `json:"description,omitempty"`
	// Version is free text: the inventory's own revision.
	Version string `json:"version,omitempty"`
	// Annotations are free notes for tools around cargoship.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ClusterSpec is the cluster-wide configuration and the host list.
type ClusterSpec struct {
	// Config is what every host shares.
	Config ClusterConfig `json:"config"`
	// Hosts are the machines; at least one has a controller role.
	Hosts []Host `json:"hosts" jsonschema:"minItems=1"`
}

// ClusterConfig is what every host of the cluster shares.
type ClusterConfig struct {
	// Loadbalancer is the address clients and joining nodes use to reach the
	// API: a VIP, a DNS name or one controller's address (default: vip.address).
	Loadbalancer string `json:"loadbalancer,omitempty"`
	// VIP is a floating API address cargoship brings up on the controllers.
	VIP *VIP `json:"vip,omitempty"`
	// ExternalDatastore says the controllers keep their state outside embedded etcd on purpose (datastore-endpoint, disable-etcd, kubeadm's external etcd).
	ExternalDatastore bool `json:"externalDatastore,omitempty"`
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
	Mirrors []string `json:"mirrors,omitempty"`
	// Auth are credentials, sent to the mirror endpoints (never to the registry a mirror stands in for).
	Auth *RegistryAuth `json:"auth,omitempty"`
	// TLS configures how nodes verify the registry.
	TLS *RegistryTLS `json:"tls,omitempty"`
}

// RegistryProxy is a pull-through mirror.
type RegistryProxy struct {
	// URL is the mirror's address; https:// is assumed without a scheme.
	URL string `json:"url"`
}

// RegistryAuth are credentials for a registry. Prefer passEnv: a password in
// the document lives in every copy of the document.
type RegistryAuth struct {
	// User is the user name.
	User string `json:"user,omitempty"`
	// Pass is a password in the document (a warning); not with passEnv.
	Pass string `json:"pass,omitempty"`
	// PassEnv names the environment variable holding the password.
	PassEnv string `json:"passEnv,omitempty"`
	// Token is a bearer token instead of user and password.
	Token string `json:"token,omitempty"`
}

// RegistryTLS configures how nodes verify a registry.
type RegistryTLS struct {
	// CAFile is the CA bundle on the nodes that signs the registry's certificate.
	CAFile string `json:"caFile,omitempty"`
	// CertFile is a client certificate on the nodes.
	CertFile string `json:"certFile,omitempty"`
	// KeyFile is the client certificate's key on the nodes.
	KeyFile string `json:"keyFile,omitempty"`
	// InsecureSkipVerify turns certificate verification off (tests only).
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// Profile is a named set of engine and kubelet settings merged into the
// config of every host whose profile names it.
type Profile struct {
	// Name is what a host's profile field names.
	Name string `json:"name"`
	// EngineConfig is laid over the distro's engine config: a key replaces, "key+" appends.
	EngineConfig map[string]any `json:"engineConfig,omitempty"`
	// KubeletConfig is the body of a KubeletConfiguration, written per node.
	KubeletConfig map[string]any `json:"kubeletConfig,omitempty"`
}

// Firewall is the set of ports to open and rules to apply.
type Firewall struct {
	// Ports are opened on every host, besides the engine's own.
	Ports []Port `json:"ports,omitempty"`
	// Rules apply to every host; each needs a source, a port or both.
	Rules []FirewallRule `json:"rules,omitempty"`
}

// Port is one port, or a range "30000-32767", and its protocol.
type Port struct {
	// Port is one port (6443) or a range ("30000-32767").
	Port PortValue `json:"port"`
	// Protocol is tcp (the default) or udp.
	Protocol string `json:"protocol,omitempty" jsonschema:"enum=tcp,enum=udp"`
}

// FirewallRule admits (or drops) traffic from a source to a port.
type FirewallRule struct {
	// Name names the rule in the firewall's configuration (default: its position).
	Name string `json:"name,omitempty"`
	// Source is an IP address or CIDR (default: any).
	Source string `json:"source,omitempty"`
	// Port is a port or range (default: any); a protocol needs one.
	Port PortValue `json:"port,omitempty"`
	// Protocol is tcp (the default) or udp.
	Protocol string `json:"protocol,omitempty" jsonschema:"enum=tcp,enum=udp"`
	// Action is accept (the default), drop or reject.
	Action string `json:"action,omitempty" jsonschema:"enum=accept,enum=drop,enum=reject"`
}
