package engine

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// containerdFiles are the upstream engine's containerd settings
// (docs/reference/engines.md 8): a config.toml for containerd 2.x (config
// version 3) that keeps the CRI plugin on (the containerd.io package's
// default config disables it), uses the cgroup driver the kubelet uses
// (runc and the kubelet must agree), reads registry hosts from certs.d, and
// pins the sandbox image the package carries so an air-gapped node never
// pulls one; and one hosts.toml per registry from the same registries body
// k3s and rke2 read.
func containerdFiles(d *v1alpha1.Distro, cgroupDriver string, reg map[string]any) ([]File, error) {
	var b strings.Builder
	b.WriteString("# Written by cargoship for containerd 2.x.\nversion = 3\n")
	// containerd's own default: a site's (or the distro's) settings go in
	// drop-ins the package places there, merged over this file
	// (docs/reference/engines.md 8).
	b.WriteString("imports = [" + tomlString(containerdDropIns) + "]\n")
	if pause := sandboxImage(d.Spec.Config.ImageConfig.Images); pause != "" {
		b.WriteString("\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n")
		b.WriteString("  sandbox = " + tomlString(pause) + "\n")
	}
	b.WriteString("\n[plugins.'io.containerd.cri.v1.images'.registry]\n")
	b.WriteString("  config_path = " + tomlString(containerdHosts) + "\n")
	// runtime_type is written, not left to containerd's defaults: a
	// runtimes table that sets only options relies on how containerd
	// merges it with its own (docs/reference/engines.md 8).
	b.WriteString("\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n")
	b.WriteString("  runtime_type = " + tomlString("io.containerd.runc.v2") + "\n")
	b.WriteString("\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n")
	b.WriteString("  SystemdCgroup = " + strconv.FormatBool(cgroupDriver == cgroupDriverSystemd) + "\n")
	files := []File{
		{Path: containerdConfig, Content: []byte(b.String()), Mode: modePublic},
		{Path: crictlConfig, Content: []byte("runtime-endpoint: " + containerdSocket + "\n"), Mode: modePublic},
	}
	hosts, err := hostsFiles(reg)
	if err != nil {
		return nil, err
	}
	return append(files, hosts...), nil
}

// containerdDropIns are the files containerd merges over its config.
const containerdDropIns = "/etc/containerd/conf.d/*.toml"

// The kubelet's cgroup drivers (KubeletConfiguration cgroupDriver).
const (
	cgroupDriverSystemd  = "systemd"
	cgroupDriverCgroupfs = "cgroupfs"
)

// kubeletCgroupDriver is the cgroup driver a host's kubelet runs with:
// kubeadm defaults it to systemd (docs/reference/engines.md 8); a
// kubeletConfiguration (the distro's, or the profile's kubelet patch)
// may set cgroupfs, for hosts without a systemd that delegates cgroups.
func kubeletCgroupDriver(cfg map[string]any, profileKubelet map[string]any) (string, error) {
	driver := cgroupDriverSystemd
	for _, kc := range []map[string]any{mapAt(cfg, "kubeletConfiguration"), profileKubelet} {
		v, set := kc["cgroupDriver"]
		if !set {
			continue
		}
		s, _ := v.(string)
		if s != cgroupDriverSystemd && s != cgroupDriverCgroupfs {
			return "", fmt.Errorf("kubeletConfiguration.cgroupDriver is %v: the kubelet knows %s and %s", v, cgroupDriverSystemd, cgroupDriverCgroupfs)
		}
		driver = s
	}
	return driver, nil
}

// sandboxImage is the pause image among the package's images.
func sandboxImage(images []string) string {
	for _, i := range images {
		if strings.Contains(i, "/pause:") {
			return i
		}
	}
	return ""
}

// hostsFiles turns a registries.yaml body into containerd hosts.toml
// files. containerd reads no credentials or rewrites from them, so those
// are refused rather than dropped.
func hostsFiles(reg map[string]any) ([]File, error) {
	mirrors, _ := reg["mirrors"].(map[string]any)
	configs, _ := reg["configs"].(map[string]any)
	tlsFor := func(host string) (map[string]any, error) {
		c, _ := configs[host].(map[string]any)
		if c["auth"] != nil {
			return nil, fmt.Errorf("registry %s: %w", host, v1alpha1.CheckRegistryAuthFor(v1alpha1.EngineUpstream))
		}
		t, _ := c["tls"].(map[string]any)
		return t, nil
	}
	used := map[string]bool{}
	var files []File
	for _, name := range sortedKeys(mirrors) {
		m, _ := mirrors[name].(map[string]any)
		if m["rewrite"] != nil {
			return nil, fmt.Errorf("registry %s: %w", name, v1alpha1.CheckRegistryRewriteFor(v1alpha1.EngineUpstream))
		}
		var b strings.Builder
		if name != "*" {
			tls, err := tlsFor(name)
			if err != nil {
				return nil, err
			}
			used[name] = true
			b.WriteString("server = " + tomlString(upstreamServer(name)) + "\n")
			writeHostTLS(&b, "", tls)
		}
		for _, e := range stringList(m["endpoint"]) {
			h := endpointHost(e)
			tls, err := tlsFor(h)
			if err != nil {
				return nil, err
			}
			used[h] = true
			b.WriteString("\n[host." + tomlString(e) + "]\n")
			b.WriteString("  capabilities = ['pull', 'resolve']\n")
			writeHostTLS(&b, "  ", tls)
		}
		files = append(files, hostsFile(name, b.String()))
	}
	// A registry with TLS settings but no mirror entry.
	for _, h := range sortedKeys(configs) {
		if used[h] {
			continue
		}
		tls, err := tlsFor(h)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteString("server = " + tomlString(upstreamServer(h)) + "\n")
		writeHostTLS(&b, "", tls)
		files = append(files, hostsFile(h, b.String()))
	}
	return files, nil
}

func hostsFile(registry, body string) File {
	dir := registry
	if registry == "*" {
		dir = "_default"
	}
	return File{
		Path:    path.Join(containerdHosts, dir, "hosts.toml"),
		Content: []byte("# Written by cargoship.\n" + body),
		Mode:    modePublic,
	}
}

// upstreamServer is where containerd falls back to for a registry name.
func upstreamServer(name string) string {
	if name == "docker.io" {
		return "https://registry-1.docker.io"
	}
	return "https://" + name
}

func writeHostTLS(b *strings.Builder, indent string, tls map[string]any) {
	if ca, ok := tls["ca_file"].(string); ok && ca != "" {
		b.WriteString(indent + "ca = " + tomlString(ca) + "\n")
	}
	cert, _ := tls["cert_file"].(string)
	key, _ := tls["key_file"].(string)
	if cert != "" && key != "" {
		b.WriteString(indent + "client = [[" + tomlString(cert) + ", " + tomlString(key) + "]]\n")
	}
	if truthy(tls["insecure_skip_verify"]) {
		b.WriteString(indent + "skip_verify = true\n")
	}
}

// tomlString quotes s as a TOML string: a literal string when it can be
// one, else a basic string with escapes.
func tomlString(s string) string {
	if !strings.ContainsAny(s, "'\n\r\t\\\"") && isPrintable(s) {
		return "'" + s + "'"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
