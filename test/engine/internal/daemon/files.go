package daemon

import (
	"fmt"

	"github.com/goccy/go-yaml"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
)

// checkFiles fails like the real components when a file the config names
// is missing: the kubelet its --config, the apiserver its audit policy and
// admission configuration. cargoship writes these files; a config that
// points at one it did not write must not start.
func checkFiles(c Config, server bool) error {
	if p, ok := componentArg(c.KubeletArgs, "config"); ok {
		b, err := hostfs.ReadFile(p)
		if err == nil {
			var doc map[string]any
			err = yaml.Unmarshal(b, &doc)
		}
		if err != nil {
			return fmt.Errorf("kubelet exited: failed to load kubelet config file, path: %s, error: %w", p, err)
		}
	}
	if !server {
		return nil
	}
	files := []string{c.AuditPolicyFile, c.PodSecurityConfigFile}
	for _, arg := range []string{"audit-policy-file", "admission-control-config-file"} {
		if p, ok := componentArg(c.KubeAPIServerArgs, arg); ok {
			files = append(files, p)
		}
	}
	for _, p := range files {
		if p == "" {
			continue
		}
		if _, err := hostfs.ReadFile(p); err != nil {
			return fmt.Errorf("apiserver exited: %w", err)
		}
	}
	return nil
}

// kubeletInterval is how often the kubelet posts node status:
// node-status-update-frequency from kubelet-arg or the kubelet config
// file, 10s by default.
func kubeletInterval(c Config) (interval string) {
	if v, ok := componentArg(c.KubeletArgs, "node-status-update-frequency"); ok {
		return v
	}
	if p, ok := componentArg(c.KubeletArgs, "config"); ok {
		var doc struct {
			NodeStatusUpdateFrequency string `yaml:"nodeStatusUpdateFrequency"`
		}
		if b, err := hostfs.ReadFile(p); err == nil && yaml.Unmarshal(b, &doc) == nil {
			return doc.NodeStatusUpdateFrequency
		}
	}
	return ""
}
