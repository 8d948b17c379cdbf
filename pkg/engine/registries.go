package engine

import (
	"fmt"
	"net/url"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// registries is the registries.yaml body k3s and rke2 read
// (docs/reference/engines.md 3.3): the distro's engine.registries, with the
// cluster's registries laid over it (the inventory knows the site; the
// package only its defaults). It is nil when neither names a registry. secret
// reports whether it holds credentials.
func registries(c *v1alpha1.Cluster, d *v1alpha1.Distro, passwords map[string]string) (body map[string]any, secret bool, err error) {
	site := map[string]any{}
	mirrors := map[string]any{}
	configs := map[string]any{}
	for _, r := range c.Spec.Config.Registries {
		// A mirror entry without endpoints would turn the embedded
		// registry (Spegel) on for the name, so only mirrors get one.
		endpoints := registryEndpoints(r)
		if len(endpoints) > 0 {
			mirrors[r.Name] = map[string]any{"endpoint": anyList(endpoints)}
		}

		cfg, err := registryConfig(r, passwords)
		if err != nil {
			return nil, false, err
		}
		if len(cfg) == 0 {
			continue
		}
		// Credentials go to the endpoints the entry names, never to the
		// upstream registry a mirror stands in for: it is tried last and
		// would receive the mirror's password.
		hosts := []string{r.Name}
		if len(endpoints) > 0 {
			hosts = hosts[:0]
			for _, e := range endpoints {
				hosts = append(hosts, endpointHost(e))
			}
		}
		for _, h := range hosts {
			configs[h] = cloneMap(cfg)
		}
	}
	if len(mirrors) > 0 {
		site["mirrors"] = mirrors
	}
	if len(configs) > 0 {
		site["configs"] = configs
	}
	body = merge(d.Spec.Config.Engine.Registries, site)
	if len(body) == 0 {
		return nil, false, nil
	}
	// Both documents' names were validated; checked again here because
	// containerd's hosts.toml directories are named after these keys.
	for _, section := range []string{"mirrors", "configs"} {
		m, _ := body[section].(map[string]any)
		for name := range m {
			if err := v1alpha1.CheckRegistryName(name); err != nil {
				return nil, false, fmt.Errorf("registries.yaml %s: %w", section, err)
			}
		}
	}
	if cfgs, ok := body["configs"].(map[string]any); ok {
		for _, v := range cfgs {
			if m, ok := v.(map[string]any); ok && m["auth"] != nil {
				secret = true
			}
		}
	}
	return body, secret, nil
}

// registryEndpoints are a registry's mirrors then its proxy, each with a
// scheme (https unless written).
func registryEndpoints(r v1alpha1.Registry) []string {
	var out []string
	for _, m := range r.Mirrors {
		out = append(out, withScheme(m))
	}
	if r.Proxy != nil && r.Proxy.URL != "" {
		out = append(out, withScheme(r.Proxy.URL))
	}
	return out
}

func withScheme(s string) string {
	if strings.Contains(s, "://") {
		return s
	}
	return "https://" + s
}

// endpointHost is the host[:port] registries.yaml keys configs by.
func endpointHost(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return endpoint
}

// registryConfig is the configs entry (auth, tls) of one registry.
func registryConfig(r v1alpha1.Registry, passwords map[string]string) (map[string]any, error) {
	cfg := map[string]any{}
	if a := r.Auth; a != nil {
		auth := map[string]any{}
		if a.User != "" {
			auth["username"] = a.User
		}
		switch {
		case a.PassEnv != "":
			p, ok := passwords[r.Name]
			if !ok || p == "" {
				return nil, fmt.Errorf("registry %s: the password from $%s was not given", r.Name, a.PassEnv)
			}
			auth["password"] = p
		case a.Pass != "":
			auth["password"] = a.Pass
		}
		// A token is the pre-encoded credential registries.yaml calls auth.
		if a.Token != "" {
			auth["auth"] = a.Token
		}
		if len(auth) > 0 {
			cfg["auth"] = auth
		}
	}
	if t := r.TLS; t != nil {
		tls := map[string]any{}
		if t.CAFile != "" {
			tls["ca_file"] = t.CAFile
		}
		if err := v1alpha1.CheckRegistryTLS(t); err != nil {
			return nil, fmt.Errorf("registry %s: tls %w", r.Name, err)
		}
		if t.CertFile != "" {
			tls["cert_file"] = t.CertFile
			tls["key_file"] = t.KeyFile
		}
		if t.InsecureSkipVerify {
			tls["insecure_skip_verify"] = true
		}
		if len(tls) > 0 {
			cfg["tls"] = tls
		}
	}
	return cfg, nil
}
