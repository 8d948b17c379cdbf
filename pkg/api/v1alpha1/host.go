package v1alpha1

// Host roles. Controller-type roles run the engine's server.
const (
	RoleController          = "controller"
	RoleControllerAndWorker = "controller+worker"
	RoleSingle              = "single"
	RoleWorker              = "worker"
)

// Roles lists every valid role, in documentation order.
var Roles = []string{RoleController, RoleControllerAndWorker, RoleSingle, RoleWorker}

// Host is one machine of the inventory.
type Host struct {
	// Exactly one connection: ssh, openSSH or localhost.
	SSH       *SSH       `json:"ssh,omitempty"`
	OpenSSH   *OpenSSH   `json:"openSSH,omitempty"`
	Localhost *Localhost `json:"localhost,omitempty"`

	// Hostname is the node name; found on the host when empty.
	Hostname string `json:"hostname,omitempty"`
	// PrivateAddress is the address peers use; discovered when empty.
	PrivateAddress string `json:"privateAddress,omitempty"`
	// PrivateInterface holds PrivateAddress; discovered when empty.
	PrivateInterface string `json:"privateInterface,omitempty"`

	Role    string `json:"role" jsonschema:"enum=controller,enum=controller+worker,enum=single,enum=worker"`
	Profile string `json:"profile,omitempty"`

	Environment map[string]string `json:"environment,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Taints      []string          `json:"taints,omitempty"`
	Files       []HostFile        `json:"files,omitempty"`
	Ports       []Port            `json:"ports,omitempty"`
	Firewall    *HostFirewall     `json:"firewall,omitempty"`

	// SudoPasswordEnv names the environment variable holding this host's
	// sudo password; the password itself never appears in the document.
	SudoPasswordEnv string `json:"sudoPasswordEnv,omitempty"`
}

// HostFirewall holds rules for one host only.
type HostFirewall struct {
	Rules []FirewallRule `json:"rules,omitempty"`
}

// SSH connects with the built-in SSH client.
type SSH struct {
	Address string `json:"address"`
	User    string `json:"user,omitempty" jsonschema:"default=root"`
	Port    int    `json:"port,omitempty" jsonschema:"default=22"`
	KeyPath string `json:"keyPath,omitempty"`
	// HostKey pins the host's public key (authorized_keys form or a
	// SHA256: fingerprint) instead of known_hosts.
	HostKey string `json:"hostKey,omitempty"`
	Bastion *SSH   `json:"bastion,omitempty"`
}

// OpenSSH connects through the system ssh binary and its ssh_config.
type OpenSSH struct {
	Address             string         `json:"address"`
	User                string         `json:"user,omitempty"`
	Port                int            `json:"port,omitempty"`
	KeyPath             string         `json:"keyPath,omitempty"`
	ConfigPath          string         `json:"configPath,omitempty"`
	Options             map[string]any `json:"options,omitempty"`
	DisableMultiplexing bool           `json:"disableMultiplexing,omitempty"`
}

// Localhost runs on the machine cargoship runs on.
type Localhost struct {
	Enabled bool `json:"enabled"`
}

// HostFile is a file written to one host: inline data, or a local file.
type HostFile struct {
	Name   string   `json:"name"`
	Src    string   `json:"src,omitempty"`
	Dst    string   `json:"dst,omitempty"`
	DstDir string   `json:"dstDir,omitempty"`
	Perm   FileMode `json:"perm,omitempty"`
	User   string   `json:"user,omitempty"`
	Group  string   `json:"group,omitempty"`
	Data   string   `json:"data,omitempty"`
}

// IsController reports whether the host runs the engine's server.
func (h *Host) IsController() bool {
	switch h.Role {
	case RoleController, RoleControllerAndWorker, RoleSingle:
		return true
	}
	return false
}

// Address is the address cargoship connects to.
func (h *Host) Address() string {
	switch {
	case h.SSH != nil:
		return h.SSH.Address
	case h.OpenSSH != nil:
		return h.OpenSSH.Address
	case h.Localhost != nil:
		return "127.0.0.1"
	}
	return ""
}

// Port is the SSH port cargoship connects to (0 for localhost).
func (h *Host) ConnPort() int {
	switch {
	case h.SSH != nil:
		return h.SSH.Port
	case h.OpenSSH != nil:
		return h.OpenSSH.Port
	}
	return 0
}

// Name is how cargoship names the host in messages: the hostname when the
// document gives one, otherwise its address.
func (h *Host) Name() string {
	if h.Hostname != "" {
		return h.Hostname
	}
	return h.Address()
}
