package phase

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/shell"
	"github.com/colonel-byte/cargoship/pkg/vip"
)

// Providers a controller can carry from an earlier apply.
const (
	retireKeepalived = v1alpha1.VIPKeepalived
	retireKubeVIP    = v1alpha1.VIPKubeVIP
)

// keepalivedHeader starts every keepalived.conf cargoship writes: a file
// without it is the site's own, and stays.
const keepalivedHeader = "# Written by cargoship"

// findRetired asks every controller, in one command, whether it still has
// a provider the cluster's VIP no longer uses: cargoship's keepalived
// configuration when the provider is not keepalived, kube-vip's manifest
// when it is not kube-vip (no VIP at all: neither).
func (p *ConfigureVIP) findRetired(ctx context.Context) error {
	s := p.state
	p.retire = nil
	provider := ""
	if v := s.Cluster.Spec.Config.VIP; v != nil {
		provider = v.ProviderName()
	}
	probe := host.Script(`head -n1 "$1" 2>/dev/null; echo; if [ -e "$2" ]; then echo kube-vip; fi`, vip.ConfigPath, engine.KubeVIPManifestPath(s.Engine))
	found, err := node.Map(ctx, s.Hosts.Controllers().Filter(func(h *node.Host) bool { return h.Conn != nil }), s.Options.Concurrency,
		func(ctx context.Context, h *node.Host) ([]string, bool, error) {
			out, err := h.Conn.Sudo(ctx, probe)
			if err != nil {
				return nil, false, fmt.Errorf("looking for an earlier VIP provider: %w", err)
			}
			first, rest, _ := strings.Cut(out, "\n")
			var old []string
			if provider != v1alpha1.VIPKeepalived && strings.HasPrefix(first, keepalivedHeader) {
				old = append(old, retireKeepalived)
			}
			if provider != v1alpha1.VIPKubeVIP && strings.TrimSpace(rest) == "kube-vip" {
				old = append(old, retireKubeVIP)
			}
			return old, len(old) > 0, nil
		})
	if err != nil {
		return err
	}
	if len(found) > 0 {
		p.retire = found
	}
	return nil
}

func (p *ConfigureVIP) retiring(what string) node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool {
		for _, r := range p.retire[h] {
			if r == what {
				return true
			}
		}
		return false
	})
}

func (p *ConfigureVIP) planRetired() []node.Change {
	var out []node.Change
	for _, h := range p.retiring(retireKeepalived) {
		out = append(out, node.Change{Host: h.String(), What: "stop keepalived and remove cargoship's configuration: the VIP is no longer keepalived's"})
	}
	for _, h := range p.retiring(retireKubeVIP) {
		out = append(out, node.Change{Host: h.String(), What: "remove kube-vip's " + engine.KubeVIPManifestPath(p.state.Engine) + ": the VIP is no longer kube-vip's"})
	}
	if len(p.retiring(retireKubeVIP)) > 0 && p.state.Engine.Paths().ManifestsDir != "" && p.state.KubectlHost() != nil {
		out = append(out, node.Change{Host: p.state.KubectlHost().String(), What: "kubectl delete " + strings.Join(engine.KubeVIPObjects(), " ")})
	}
	return out
}

// runRetired takes the old provider off: keepalived stopped, disabled and
// its files removed; kube-vip's file removed and, on k3s and rke2, whose
// deploy controller leaves a removed file's objects in place, its objects
// deleted.
func (p *ConfigureVIP) runRetired(ctx context.Context) error {
	s := p.state
	err := p.retiring(retireKeepalived).Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		cmd := shell.Join("systemctl", "disable", "--now", vip.Service) + " && " + shell.Join("rm", "-f", vip.ConfigPath, vip.CheckScriptPath)
		if _, err := h.Conn.Sudo(ctx, cmd); err != nil {
			return fmt.Errorf("retiring keepalived: %w", err)
		}
		s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: "stopped keepalived and removed cargoship's configuration"})
		return nil
	})
	if err != nil {
		return err
	}
	kv := p.retiring(retireKubeVIP)
	if len(kv) == 0 {
		return nil
	}
	if s.Engine.Paths().ManifestsDir != "" && s.KubectlHost() != nil {
		args := append([]string{"-n", engine.KubeVIPNamespace, "delete", "--ignore-not-found"}, engine.KubeVIPObjects()...)
		if _, err := s.Kubectl(ctx, args...); err != nil {
			return fmt.Errorf("deleting kube-vip's objects: %w", err)
		}
		s.Report.Add(node.Change{Host: s.KubectlHost().String(), Phase: p.Title(), What: "deleted kube-vip's DaemonSet, ServiceAccount and RBAC"})
	}
	return kv.Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		f := engine.KubeVIPManifestPath(s.Engine)
		if _, err := h.Conn.Sudo(ctx, shell.Join("rm", "-f", f)); err != nil {
			return fmt.Errorf("removing %s: %w", f, err)
		}
		s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: "removed " + f})
		return nil
	})
}
