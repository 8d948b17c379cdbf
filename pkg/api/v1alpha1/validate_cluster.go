package v1alpha1

import (
	"fmt"
	"slices"
	"strconv"
)

// validateCluster checks everything about an inventory that can be known
// without touching a host, and reports every problem it finds.
func validateCluster(d *document, c *Cluster) { validateClusterRules(d, c, haRules) }

// validateClusterRules is validateCluster with the HA rules given, so a
// test can leave one out.
func validateClusterRules(d *document, c *Cluster, rules []haRule) {
	if c.Kind != KindCluster && c.Kind != KindLegacyCluster {
		d.errorf("kind", "is %q; a cluster document has kind %q (or the earlier %q)", c.Kind, KindCluster, KindLegacyCluster)
	}
	if c.APIVersion != "" && c.APIVersion != GroupVersion && c.APIVersion != LegacyGroupVersion {
		d.errorf("apiVersion", "is %q; use %q", c.APIVersion, GroupVersion)
	}
	if c.Metadata.Name == "" {
		d.errorf("metadata.name", "is required")
	} else if !namePattern.MatchString(c.Metadata.Name) {
		d.errorf("metadata.name", "%q must be lower-case letters, digits and hyphens", c.Metadata.Name)
	}
	validateClusterConfig(d, &c.Spec.Config, c.Spec.Hosts)
	if validateHosts(d, c) {
		runHA(d, c, rules)
	}
}

func validateClusterConfig(d *document, cfg *ClusterConfig, hosts []Host) {
	switch {
	case cfg.Loadbalancer == "" && cfg.VIP == nil:
		d.errorf("spec.config.loadbalancer", "is required unless spec.config.vip is set: the address nodes join through and clients reach the API at (a VIP, a DNS name or a controller's address)")
	case cfg.Loadbalancer != "" && !isHost(cfg.Loadbalancer):
		d.errorf("spec.config.loadbalancer", "%q is neither an IP address nor a DNS name", cfg.Loadbalancer)
	}
	if cfg.VIP != nil {
		validateVIP(d, cfg.VIP, hosts)
	}
	seenReg := map[string]int{}
	for i, r := range cfg.Registries {
		p := fmt.Sprintf("spec.config.registries[%d]", i)
		if r.Name == "" {
			d.errorf(p+".name", "is required (the registry host images name, e.g. docker.io)")
		} else if err := CheckRegistryName(r.Name); err != nil {
			d.errorf(p+".name", "%v", err)
		} else if j, dup := seenReg[r.Name]; dup {
			d.errorf(p+".name", "%q is already defined at spec.config.registries[%d]", r.Name, j)
		} else {
			seenReg[r.Name] = i
		}
		for j, m := range r.Mirrors {
			if err := CheckRegistryEndpoint(m); err != nil {
				d.errorf(fmt.Sprintf("%s.mirrors[%d]", p, j), "%v", err)
			}
		}
		if r.Proxy != nil && r.Proxy.URL == "" {
			d.errorf(p+".proxy.url", "is required")
		} else if r.Proxy != nil {
			if err := CheckRegistryEndpoint(r.Proxy.URL); err != nil {
				d.errorf(p+".proxy.url", "%v", err)
			}
		}
		if err := CheckRegistryTLS(r.TLS); err != nil {
			d.errorf(p+".tls", "%v", err)
		}
		if a := r.Auth; a != nil {
			if a.Pass != "" && a.PassEnv != "" {
				d.errorf(p+".auth", "set pass or passEnv, not both")
			}
			if a.PassEnv != "" && !envName.MatchString(a.PassEnv) {
				d.errorf(p+".auth.passEnv", "%q is not an environment variable name", a.PassEnv)
			}
			if a.Pass != "" {
				d.warnf(p+".auth.pass", "a password in the document travels with every copy of it; prefer passEnv")
			}
		}
	}
	seenProfile := map[string]int{}
	for i, pr := range cfg.Profiles {
		p := fmt.Sprintf("spec.config.profiles[%d].name", i)
		switch j, dup := seenProfile[pr.Name]; {
		case pr.Name == "":
			d.errorf(p, "is required")
		case dup:
			d.errorf(p, "profile %q is defined twice (first at spec.config.profiles[%d])", pr.Name, j)
		default:
			seenProfile[pr.Name] = i
		}
		ep := fmt.Sprintf("spec.config.profiles[%d].engineConfig", i)
		for _, k := range sortedKeys(pr.EngineConfig) {
			// The engine is the distro's: the rest is checked against it
			// (crosscheck.go).
			if err := CheckEngineConfigKey("", k, pr.EngineConfig[k]); err != nil {
				d.keyErrorf(joinPath(ep, k), "%v", err)
			}
		}
	}
	if cfg.Firewall != nil {
		validatePorts(d, "spec.config.firewall.ports", cfg.Firewall.Ports)
		validateRules(d, "spec.config.firewall.rules", cfg.Firewall.Rules)
	}
}

func validatePorts(d *document, path string, ports []Port) {
	for i, p := range ports {
		pp := fmt.Sprintf("%s[%d]", path, i)
		if _, _, err := p.Port.Range(); err != nil {
			d.errorf(pp+".port", "%v", err)
		}
		if p.Protocol != "" && !slices.Contains(fwProtocols, p.Protocol) {
			d.errorf(pp+".protocol", "%q is not one of %s", p.Protocol, quoteList(fwProtocols))
		}
	}
}

func validateRules(d *document, path string, rules []FirewallRule) {
	for i, r := range rules {
		rp := fmt.Sprintf("%s[%d]", path, i)
		if r.Source == "" && r.Port == "" {
			d.errorf(rp, "a rule needs a source, a port, or both")
		}
		if r.Source != "" && !isSource(r.Source) {
			d.errorf(rp+".source", "%q is not an IP address or CIDR", r.Source)
		}
		if r.Port != "" {
			if _, _, err := r.Port.Range(); err != nil {
				d.errorf(rp+".port", "%v", err)
			}
		}
		if r.Protocol != "" && !slices.Contains(fwProtocols, r.Protocol) {
			d.errorf(rp+".protocol", "%q is not one of %s", r.Protocol, quoteList(fwProtocols))
		} else if r.Protocol != "" && r.Port == "" {
			d.errorf(rp+".protocol", "a protocol needs a port")
		}
		if r.Action != "" && !slices.Contains(fwActions, r.Action) {
			d.errorf(rp+".action", "%q is not one of %s", r.Action, quoteList(fwActions))
		}
	}
}

// validateHosts reports whether there is a control plane to check further.
func validateHosts(d *document, c *Cluster) bool {
	if len(c.Spec.Hosts) == 0 {
		d.errorf("spec.hosts", "lists no hosts; a cluster needs at least one controller")
		return false
	}
	hostnames := map[string]int{}
	privAddrs := map[string]int{}
	endpoints := map[string]int{}
	controllers := 0
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		p := fmt.Sprintf("spec.hosts[%d]", i)
		validateConnection(d, p, h)
		validateHost(d, p, h)
		if h.IsController() {
			controllers++
		}
		if h.Hostname != "" {
			if j, dup := hostnames[h.Hostname]; dup {
				d.errorf(p+".hostname", "%q is also the hostname of spec.hosts[%d]; node names must be unique", h.Hostname, j)
			} else {
				hostnames[h.Hostname] = i
			}
		}
		if h.PrivateAddress != "" {
			if j, dup := privAddrs[h.PrivateAddress]; dup {
				d.errorf(p+".privateAddress", "%s is also the privateAddress of spec.hosts[%d]", h.PrivateAddress, j)
			} else {
				privAddrs[h.PrivateAddress] = i
			}
		}
		if a := h.Address(); a != "" && h.Localhost == nil {
			port := h.ConnPort()
			if port == 0 {
				port = DefaultSSHPort // defaults come later; 10.0.0.1 and 10.0.0.1:22 are one sshd
			}
			ep := a + ":" + strconv.Itoa(port)
			if j, dup := endpoints[ep]; dup {
				d.errorf(connPath(p, h)+".address", "%s is also where spec.hosts[%d] is reached; two entries would drive one machine", ep, j)
			} else {
				endpoints[ep] = i
			}
		}
	}
	if controllers == 0 {
		d.errorf("spec.hosts", "no host has a controller role (%s); there is no control plane to install", quoteList(Roles[:3]))
		return false
	}
	return true
}

func connPath(p string, h *Host) string {
	switch {
	case h.SSH != nil:
		return p + ".ssh"
	case h.OpenSSH != nil:
		return p + ".openSSH"
	}
	return p + ".localhost"
}

func validateConnection(d *document, p string, h *Host) {
	n := 0
	for _, set := range []bool{h.SSH != nil, h.OpenSSH != nil, h.Localhost != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		d.errorf(p, "has no connection; set one of ssh, openSSH or localhost")
		return
	case n > 1:
		d.errorf(p, "sets %d connections; set exactly one of ssh, openSSH or localhost", n)
	}
	if h.SSH != nil {
		validateSSH(d, p+".ssh", h.SSH, 0)
	}
	if o := h.OpenSSH; o != nil {
		if o.Address == "" {
			d.errorf(p+".openSSH.address", "is required")
		} else if !isHost(o.Address) {
			d.errorf(p+".openSSH.address", "%q is neither an IP address nor a DNS name", o.Address)
		}
		if o.Port < 0 || o.Port > 65535 {
			d.errorf(p+".openSSH.port", "%d is not a port (1-65535)", o.Port)
		}
		for _, k := range sortedKeys(o.Options) {
			op := joinPath(p+".openSSH.options", k)
			if err := CheckSSHOptionName(k); err != nil {
				d.keyErrorf(op, "%v", err)
			} else if _, err := SSHOptionValue(o.Options[k]); err != nil {
				d.errorf(op, "%v", err)
			}
		}
	}
	if h.Localhost != nil && !h.Localhost.Enabled {
		d.errorf(p+".localhost.enabled", "must be true when localhost is set")
	}
}

func validateSSH(d *document, p string, s *SSH, depth int) {
	if s.Address == "" {
		d.errorf(p+".address", "is required")
	} else if !isHost(s.Address) {
		d.errorf(p+".address", "%q is neither an IP address nor a DNS name", s.Address)
	}
	if s.Port < 0 || s.Port > 65535 {
		d.errorf(p+".port", "%d is not a port (1-65535)", s.Port)
	}
	if s.User != "" && !unixUserOrGrp.MatchString(s.User) {
		d.errorf(p+".user", "%q is not a user name", s.User)
	}
	if s.HostKey != "" {
		if _, _, err := ParseHostKey(s.HostKey); err != nil {
			d.errorf(p+".hostKey", "%v", err)
		}
	}
	if s.Bastion != nil {
		if depth >= 3 {
			d.errorf(p+".bastion", "bastions nest more than three deep")
			return
		}
		validateSSH(d, p+".bastion", s.Bastion, depth+1)
	}
}

func validateHost(d *document, p string, h *Host) {
	if h.Role == "" {
		d.errorf(p+".role", "is required: one of %s", quoteList(Roles))
	} else if !slices.Contains(Roles, h.Role) {
		d.errorf(p+".role", "%q is not one of %s", h.Role, quoteList(Roles))
	}
	if h.Hostname != "" && !isDNSName(h.Hostname) {
		d.errorf(p+".hostname", "%q is not a valid hostname (letters, digits, hyphens and dots)", h.Hostname)
	}
	if h.PrivateAddress != "" && !isIP(h.PrivateAddress) {
		d.errorf(p+".privateAddress", "%q is not an IP address", h.PrivateAddress)
	}
	if h.PrivateInterface != "" && !interfaceName.MatchString(h.PrivateInterface) {
		d.errorf(p+".privateInterface", "%q is not a network interface name", h.PrivateInterface)
	}
	if h.Profile != "" && !namePattern.MatchString(h.Profile) {
		d.errorf(p+".profile", "%q must be lower-case letters, digits and hyphens", h.Profile)
	}
	if h.SudoPasswordEnv != "" && !envName.MatchString(h.SudoPasswordEnv) {
		d.errorf(p+".sudoPasswordEnv", "%q is not an environment variable name", h.SudoPasswordEnv)
	}
	for _, k := range sortedKeys(h.Environment) {
		if !envName.MatchString(k) {
			d.keyErrorf(joinPath(p+".environment", k), "%q is not an environment variable name", k)
		}
		if err := CheckEnvironmentValue(h.Environment[k]); err != nil {
			d.errorf(joinPath(p+".environment", k), "%v", err)
		}
	}
	for _, k := range sortedKeys(h.Labels) {
		if !isLabelKey(k) {
			d.keyErrorf(joinPath(p+".labels", k), "%q is not a Kubernetes label key", k)
		}
		if !labelValue.MatchString(h.Labels[k]) {
			d.errorf(joinPath(p+".labels", k), "%q is not a Kubernetes label value (63 letters, digits, '-', '_' or '.')", h.Labels[k])
		}
	}
	for i, t := range h.Taints {
		if !isTaint(t) {
			d.errorf(fmt.Sprintf("%s.taints[%d]", p, i), "%q is not a taint (key=value:NoSchedule|PreferNoSchedule|NoExecute)", t)
		}
	}
	validatePorts(d, p+".ports", h.Ports)
	if h.Firewall != nil {
		validateRules(d, p+".firewall.rules", h.Firewall.Rules)
	}
	for i, f := range h.Files {
		validateHostFile(d, fmt.Sprintf("%s.files[%d]", p, i), f)
	}
}

func validateHostFile(d *document, p string, f HostFile) {
	if f.Name == "" {
		d.errorf(p+".name", "is required")
	}
	switch {
	case f.Dst == "" && f.DstDir == "":
		d.errorf(p, "needs dst (a file path) or dstDir (a directory)")
	case f.Dst != "" && f.DstDir != "":
		d.errorf(p, "set dst or dstDir, not both")
	case f.Dst != "" && !isCleanAbsPath(f.Dst):
		d.errorf(p+".dst", "%q must be an absolute path without '..'", f.Dst)
	case f.DstDir != "" && !isCleanAbsPath(f.DstDir):
		d.errorf(p+".dstDir", "%q must be an absolute path without '..'", f.DstDir)
	}
	if (f.Src == "") == (f.Data == "") {
		d.errorf(p, "set exactly one of src (a local file) or data (inline content)")
	}
	if f.DstDir != "" && f.Src == "" {
		d.errorf(p+".dstDir", "needs src, whose base name names the file in the directory")
	}
	checkPerm(d, p+".perm", f.Perm, 0o644)
	if f.User != "" && !unixUserOrGrp.MatchString(f.User) {
		d.errorf(p+".user", "%q is not a user name", f.User)
	}
	if f.Group != "" && !unixUserOrGrp.MatchString(f.Group) {
		d.errorf(p+".group", "%q is not a group name", f.Group)
	}
}

func containsControl(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return true
		}
	}
	return false
}
