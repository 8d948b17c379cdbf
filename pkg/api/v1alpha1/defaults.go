package v1alpha1

// Default values for fields a document may leave out.
const (
	DefaultSSHUser = "root"
	DefaultSSHPort = 22
)

// SetDefaults fills what an inventory may leave out.
func (c *Cluster) SetDefaults() {
	if c.APIVersion == "" {
		c.APIVersion = GroupVersion
	}
	// Everything that reads the API address reads loadbalancer.
	if cfg := &c.Spec.Config; cfg.Loadbalancer == "" && cfg.VIP != nil {
		cfg.Loadbalancer = cfg.VIP.IP()
	}
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		for s := h.SSH; s != nil; s = s.Bastion {
			if s.User == "" {
				s.User = DefaultSSHUser
			}
			if s.Port == 0 {
				s.Port = DefaultSSHPort
			}
		}
		// An openSSH host keeps port 0: ssh_config (Port, or a Host alias)
		// decides, and a -p 22 here would override it.
		if h.Profile == "" {
			h.Profile = defaultProfile(h.Role)
		}
	}
}

// defaultProfile restates the role (docs/cluster.md, spec.hosts[].profile).
// Every controller-type role maps to controller.
func defaultProfile(role string) string {
	if role == RoleWorker {
		return RoleWorker
	}
	return RoleController
}

// SetDefaults fills what a definition may leave out.
func (d *Distro) SetDefaults() {
	if d.APIVersion == "" {
		d.APIVersion = LegacyGroupVersion
	}
	if d.Spec.Config.ImageConfig.Compression == "" {
		d.Spec.Config.ImageConfig.Compression = "none"
	}
	if d.Spec.Config.ImageConfig.Path == "" && len(d.Spec.Config.ImageConfig.Images) > 0 {
		d.Spec.Config.ImageConfig.Path = DefaultImagesDir(d.Spec.Type)
	}
}

// DefaultImagesDir is where an engine picks up image archives by itself
// (k3s, rke2), or where cargoship stages them for ctr import (upstream).
func DefaultImagesDir(engine string) string {
	switch engine {
	case EngineRKE2:
		return "/var/lib/rancher/rke2/agent/images"
	case EngineUpstream:
		return "/var/lib/cargoship/images"
	}
	return "/var/lib/rancher/k3s/agent/images"
}
