package engine

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/goccy/go-yaml"
)

// AdminKubeconfig rewrites the API server of every cluster in an admin
// kubeconfig read from a controller (k3s and rke2 write
// https://127.0.0.1:6443) to server, e.g. ServerURL(loadbalancer,
// e.APIPort()), for use from the operator's machine (phase 28). The
// credentials are kept as they are.
func AdminKubeconfig(raw []byte, server string) ([]byte, error) {
	if u, err := url.Parse(server); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("kubeconfig server %q is not an https:// URL", server)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("the kubeconfig is not YAML: %w", err)
	}
	clusters, _ := doc["clusters"].([]any)
	if len(clusters) == 0 {
		return nil, errors.New("the kubeconfig names no cluster")
	}
	for i, c := range clusters {
		entry, _ := c.(map[string]any)
		cluster, ok := entry["cluster"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the kubeconfig's clusters[%d] has no cluster", i)
		}
		cluster["server"] = server
	}
	return marshalYAML(doc)
}
