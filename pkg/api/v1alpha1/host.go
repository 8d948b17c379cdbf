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

	// Role is controller, controller+worker or single (the engine's server), or worker.
	Role string `json:"role" jsonschema:"enum=controller,enum=controller+worker,enum=single,enum=worker"`
	// Profile names a spec.config.profiles entry; defaults to the role (controller or worker).
	Profile string `json:"profile,omitempty"`

	// Environment is written to the host's /etc/environment.
	Environment map[string]string `json:"environment,omitempty"`
	// Labels are Kubernetes node labels, added to the engine's node-label.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are key[=value]:Effect, added to the engine's node-taint.
	Taints []string `json:"taints,omitempty"`
	// Files are written to this host only.
	Files []HostFile `json:"files,omitempty"`
	// Ports are opened on this host only.
	Ports []Port `json:"ports,omitempty"`
	// Firewall holds rules for this host only.
	Firewall *HostFirewall `json:"firewall,omitempty"`

	// SudoPasswordEnv names the environment variable holding this host's
	// sudo password; the password itself never appears in the document.
	SudoPasswordEnv string `json:"sudoPasswordEnv,omitempty"`
}

// HostFirewall holds rules for one host only.
type HostFirewall struct {
	// Rules apply to this host only.
	Rules []FirewallRule `json:"rules,omitempty"`
}

// SSH connects with the built-in SSH client.
type SSH struct {
	// Address is the IP address or DNS name to connect to.
	Address string `json:"address"`
	// User is the login user (default root); without root it must be able to sudo.
	User string `json:"user,omitempty" jsonschema:"default=root"`
	// Port is the SSH port (default 22).
	Port int `json:"port,omitempty" jsonschema:"default=22"`
	// KeyPath is the private key; without it the agent and ~/.ssh/id_* are tried.
	KeyPath string `json:"keyPath,omitempty"`
	// HostKey pins the host's public key (authorized_keys form or a
	// SHA256: fingerprint) instead of known_hosts.
	HostKey string `json:"hostKey,omitempty"`
	// Bastion is a jump host to connect through, up to three deep.
	Bastion *SSH `json:"bastion,omitempty"`
}

// OpenSSH connects through the system ssh binary and its ssh_config.
type OpenSSH struct {
	// Address is an IP address, DNS name or ssh_config host.
	Address string `json:"address"`
	// User is the login user (default: ssh_config's).
	User string `json:"user,omitempty"`
	// Port is the SSH port (default 22).
	Port int `json:"port,omitempty"`
	// KeyPath is the private key (ssh -i).
	KeyPath string `json:"keyPath,omitempty"`
	// ConfigPath is the ssh_config file to read (ssh -F).
	ConfigPath string `json:"configPath,omitempty"`
	// Options are ssh -o options.
	Options map[string]any `json:"options,omitempty"`
	// DisableMultiplexing turns ControlMaster connection sharing off.
	DisableMultiplexing bool `json:"disableMultiplexing,omitempty"`
}

// Localhost runs on the machine cargoship runs on.
type Localhost struct {
	// Enabled must be true.
	Enabled bool `json:"enabled"`
}

// HostFile is a file written to one host: inline data, or a local file.
type HostFile struct {
	// Name names the file in messages.
	Name string `json:"name"`
	// Src is a local file; set src or data.
	Src string `json:"src,omitempty"`
	// Dst is the absolute path on the host; set dst or dstDir.
	Dst string `json:"dst,omitempty"`
	// DstDir is a directory on the host the src file goes into.
	DstDir string `json:"dstDir,omitempty"`
	// Perm is the octal mode (default 0644).
	Perm FileMode `json:"perm,omitempty"`
	// User is the owner: a name or numeric id.
	User string `json:"user,omitempty"`
	// Group is the group: a name or numeric id.
	Group string `json:"group,omitempty"`
	// Data is the file's content, inline.
	Data string `json:"data,omitempty"`
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
