package engine

import (
	"fmt"
	"strings"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Render implements Engine for k3s and rke2 (docs/apply.md, phase 19): the
// config file, the token files, registries.yaml, the kubelet
// configuration, and on controllers the audit policy, the admission
// configuration, the chart values and kube-vip's manifest when it holds
// the VIP.
func (r *rancher) Render(in RenderInput) (Rendered, error) {
	n, err := checkInput(in, r)
	if err != nil {
		return Rendered{}, err
	}
	p := r.Paths()
	host := in.Host.Name()

	cfg := HostConfig(in.Cluster, in.Distro, in.Host)
	if err := r.checkOwnedKeys(cfg); err != nil {
		return Rendered{}, fmt.Errorf("%s: %w", host, err)
	}

	var files []File
	add := func(path string, content []byte, secret bool) {
		files = append(files, File{Path: path, Content: content, Mode: modePrivate, Secret: secret})
	}

	cfg["node-name"] = n.name
	cfg["node-ip"] = n.ip
	lbls, tnts, err := r.registration(cfg, in.Host)
	if err != nil {
		return Rendered{}, fmt.Errorf("%s: %w", host, err)
	}
	setList(cfg, "node-label", lbls)
	setList(cfg, "node-taint", tnts)

	// Tokens go in 0600 files the config names; the config itself, which
	// phases may show in a diff, never holds one.
	token := in.Token
	if !n.controller && in.AgentToken != "" {
		token = in.AgentToken
	}
	switch {
	case token != "":
		cfg["token-file"] = p.TokenFile
		add(p.TokenFile, []byte(token), true)
	case !n.founder:
		return Rendered{}, fmt.Errorf("%s: no token to join with: read it from the founder's %s", host, r.ServerTokenPath())
	}

	if n.controller {
		cfg["tls-san"] = anyList(tlsSANs(in.Cluster, append(stringList(cfg["tls-san"]), n.name)))
		if in.AgentToken != "" {
			cfg["agent-token-file"] = p.AgentTokenFile
			add(p.AgentTokenFile, []byte(in.AgentToken), true)
		}
		if n.founder && r.clusterInit {
			// Embedded etcd from the first start, so controllers can be
			// added later: a k3s server started on SQLite cannot take
			// joining servers. An explicit cluster-init in the config wins.
			if _, set := cfg["cluster-init"]; !set {
				cfg["cluster-init"] = true
			}
		}
	} else {
		for k := range cfg {
			if serverOnly(k) {
				delete(cfg, k)
			}
		}
	}
	if !n.founder {
		cfg["server"] = ServerURL(in.JoinAddress, r.joinPort)
		delete(cfg, "cluster-init")
	}

	reg, secret, err := registries(in.Cluster, in.Distro, in.RegistryPasswords)
	if err != nil {
		return Rendered{}, fmt.Errorf("%s: %w", host, err)
	}
	if reg != nil {
		b, err := marshalYAML(reg)
		if err != nil {
			return Rendered{}, err
		}
		add(p.Registries, b, secret)
	}

	if n.profile != nil && len(n.profile.KubeletConfig) > 0 {
		// kubelet-arg config= is honoured over the engine's own kubelet
		// defaults from 1.32 on (k3s docs, "Kubelet configuration").
		if v, err := ParseVersion(in.Distro.Spec.Version); err != nil || Compare(v, Version{Major: 1, Minor: 32}) < 0 {
			return Rendered{}, fmt.Errorf("%s: profile %s sets kubeletConfig, which %s %s cannot take; it needs 1.32 or later", host, n.profile.Name, r.name, in.Distro.Spec.Version)
		}
		b, err := marshalYAML(document("kubelet.config.k8s.io/v1beta1", "KubeletConfiguration", n.profile.KubeletConfig))
		if err != nil {
			return Rendered{}, err
		}
		add(p.KubeletConfig, b, false)
		if err := appendArg(cfg, "kubelet-arg", "config", p.KubeletConfig); err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", host, err)
		}
	}

	if n.controller {
		apiFiles, err := r.apiserverFiles(cfg, in)
		if err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", host, err)
		}
		files = append(files, apiFiles...)
		charts, err := chartConfigs(p.ManifestsDir, in.Distro.Spec.Config.Engine.Manifest, chartTemplateData(in.Cluster, r.APIPort()))
		if err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", host, err)
		}
		files = append(files, charts...)
		vip, err := kubeVIPFor(in.Cluster, in.Distro)
		if err != nil {
			return Rendered{}, fmt.Errorf("%s: %w", host, err)
		}
		if vip != nil {
			// Every controller writes the same file: the engine applies
			// whichever it reads, and they never disagree.
			f, err := kubeVIPDaemonSet(p.ManifestsDir, vip)
			if err != nil {
				return Rendered{}, err
			}
			files = append(files, f)
		}
	}

	b, err := marshalYAML(cfg)
	if err != nil {
		return Rendered{}, err
	}
	add(p.Config, b, false)

	unit := r.Service(n.controller)
	return Rendered{
		Files: sortFiles(files),
		Start: []string{
			systemctl([]string{"daemon-reload"}),
			systemctl([]string{"enable", "--now", "--no-block"}, unit),
		},
	}, nil
}

// checkOwnedKeys refuses config that would fight what cargoship manages,
// by the rule document validation applies to each document alone.
func (r *rancher) checkOwnedKeys(cfg map[string]any) error {
	for _, k := range sortedKeys(cfg) {
		if err := v1alpha1.CheckEngineConfigKey(r.name, k, cfg[k]); err != nil {
			return fmt.Errorf("engine config sets %s: %w", k, err)
		}
	}
	return nil
}

// apiserverFiles writes the audit policy and the admission configuration
// and points the API server at them: rke2 has config keys for both; k3s
// takes them as kube-apiserver-arg (its hardening guide's form), with an
// audit log path so the policy has somewhere to write.
func (r *rancher) apiserverFiles(cfg map[string]any, in RenderInput) ([]File, error) {
	p := r.Paths()
	eng := in.Distro.Spec.Config.Engine
	var files []File
	if len(eng.Audit) > 0 {
		b, err := marshalYAML(document("audit.k8s.io/v1", "Policy", eng.Audit))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p.AuditPolicy, Content: b, Mode: modePrivate})
		if r.apiserverFileKeys {
			cfg["audit-policy-file"] = p.AuditPolicy
		} else {
			if err := appendArg(cfg, "kube-apiserver-arg", "audit-policy-file", p.AuditPolicy); err != nil {
				return nil, err
			}
			if !hasArg(cfg, "kube-apiserver-arg", "audit-log-path") {
				_ = appendArg(cfg, "kube-apiserver-arg", "audit-log-path", p.DataDir+"/server/logs/audit.log")
			}
		}
	}
	if len(eng.PodSecurity) > 0 {
		b, err := marshalYAML(document("apiserver.config.k8s.io/v1", "AdmissionConfiguration", eng.PodSecurity))
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p.PodSecurity, Content: b, Mode: modePrivate})
		if r.apiserverFileKeys {
			cfg["pod-security-admission-config-file"] = p.PodSecurity
		} else if err := appendArg(cfg, "kube-apiserver-arg", "admission-control-config-file", p.PodSecurity); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// setList sets a list key, or removes it when the list is empty.
func setList(cfg map[string]any, key string, l []string) {
	if len(l) == 0 {
		delete(cfg, key)
		return
	}
	cfg[key] = anyList(l)
}

// argValue is the value a component-args list (kubelet-arg, ...) gives
// flag, and whether it sets it.
func argValue(cfg map[string]any, key, flag string) (string, bool) {
	for _, a := range stringList(cfg[key]) {
		if name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == flag {
			return value, true
		}
	}
	return "", false
}

func hasArg(cfg map[string]any, key, flag string) bool {
	_, ok := argValue(cfg, key, flag)
	return ok
}

// appendArg adds flag=value to a component-args list, refusing to set a
// flag the config already sets to something else.
func appendArg(cfg map[string]any, key, flag, value string) error {
	if v, ok := argValue(cfg, key, flag); ok {
		if v == value {
			return nil
		}
		return fmt.Errorf("%s already sets %s=%s; cargoship sets it to %s", key, flag, v, value)
	}
	cfg[key] = append(toList(cfg[key]), flag+"="+value)
	return nil
}
