package engine

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// Removal is what taking an engine off a node removes
// (docs/reference/behaviour.md, "Removing a host").
type Removal struct {
	// Files are removed where present: binaries, scripts, units and their
	// environment files, in every place an install route puts them.
	Files []string
	// Links are removed only when they are symbolic links: the kubectl,
	// crictl and ctr that k3s links to itself.
	Links []string
	// Dirs are removed with what they hold: the engine's own directories,
	// never their shared parents.
	Dirs []string
}

// Removal implements Engine. Files a package manager installed (rke2's
// RPMs put the binary in /usr/bin) are the package manager's to remove.
func (r *rancher) Removal() Removal {
	var rm Removal
	for _, dir := range r.binDirs {
		if dir == "/usr/bin" {
			continue
		}
		for _, name := range []string{r.name, r.name + "-killall.sh", r.name + "-uninstall.sh", r.agentUninstall} {
			rm.Files = append(rm.Files, path.Join(dir, name))
		}
		if r.clusterInit { // k3s links its tools to itself
			for _, tool := range []string{"kubectl", "crictl", "ctr"} {
				rm.Links = append(rm.Links, path.Join(dir, tool))
			}
		}
	}
	for _, unitDir := range []string{"/etc/systemd/system", "/usr/local/lib/systemd/system", "/opt/rke2/lib/systemd/system"} {
		for _, unit := range []string{r.serverUnit, r.agentUnit} {
			// k3s keeps its environment in <unit>.service.env, rke2 in <unit>.env
			for _, suffix := range []string{".service", ".service.env", ".env"} {
				rm.Files = append(rm.Files, path.Join(unitDir, unit+suffix))
			}
		}
	}
	rm.Files, rm.Links = sortedUnique(rm.Files), sortedUnique(rm.Links)
	rm.Dirs = r.CleanupPaths()
	return rm
}

// Removal implements Engine: kubeadm, the kubelet and containerd come
// from packages, which stay; what kubeadm and cargoship wrote goes.
func (u *upstream) Removal() Removal {
	return Removal{Dirs: u.CleanupPaths()}
}

// Repointer is an engine whose nodes name, in their config, the server
// they joined through (k3s, rke2): a reset that removes that server
// rewrites it on the nodes that stay.
type Repointer interface {
	// Repoint rewrites a node's config to join through join, or, when
	// join is "", to be the cluster's first server: no server line, and
	// cluster-init where the engine has it. The result is what Render
	// gives for the node in that role, byte for byte.
	Repoint(config []byte, join string, controller bool) ([]byte, error)
}

// Repoint implements Repointer.
func (r *rancher) Repoint(config []byte, join string, controller bool) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.Paths().Config, err)
	}
	if cfg == nil {
		return nil, fmt.Errorf("%s is empty", r.Paths().Config)
	}
	if join != "" {
		cfg["server"] = ServerURL(join, r.joinPort)
		delete(cfg, "cluster-init")
	} else {
		delete(cfg, "server")
		if controller && r.clusterInit {
			cfg["cluster-init"] = true
		}
	}
	return marshalYAML(cfg)
}

// serverLine finds the join URL's host in a rancher config.
var serverLine = regexp.MustCompile(`(?m)^server:\s*"?https://(\[[^\]]+\]|[^":/\s]+):[0-9]+"?\s*$`)

// ServerOf is the host a rancher config's server line names, "" when it
// names none (the founder) or is not such a config.
func ServerOf(config []byte) string {
	m := serverLine.FindSubmatch(config)
	if m == nil {
		return ""
	}
	return strings.Trim(string(m[1]), "[]")
}
