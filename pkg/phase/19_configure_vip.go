package phase

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/shell"
	"github.com/colonel-byte/cargoship/pkg/vip"
)

// ConfigureVIP configures keepalived on every controller when the cluster's
// VIP provider is keepalived (docs/ha.md): before any engine starts, so the
// founder takes the address as soon as its API server answers, and every
// other controller once its own does. kube-vip needs nothing here: its
// manifests are engine files, written with the rest.
type ConfigureVIP struct {
	base
	files map[*node.Host][]vipFile
	// retire are the providers a controller still carries that the
	// cluster's VIP no longer uses (docs/ha.md, Changing the provider).
	retire map[*node.Host][]string
}

type vipFile struct {
	path string
	data []byte
	mode os.FileMode
}

// Title implements Phase.
func (p *ConfigureVIP) Title() string { return "Configure the VIP" }

func keepalivedVIP(c *v1alpha1.Cluster) *v1alpha1.VIP {
	if v := c.Spec.Config.VIP; v != nil && v.ProviderName() == v1alpha1.VIPKeepalived {
		return v
	}
	return nil
}

// Prepare implements Preparer: each controller's configuration, from its
// effective address and interface. The VIP must sit in a subnet the
// interface has, which only the host can say.
func (p *ConfigureVIP) Prepare(ctx context.Context) error {
	s := p.state
	p.files = nil
	if err := p.findRetired(ctx); err != nil {
		return err
	}
	v := keepalivedVIP(s.Cluster)
	if v == nil {
		return nil
	}
	prefix, err := vip.Prefix(v)
	if err != nil {
		return err
	}
	byName := map[*v1alpha1.Host]*node.Host{}
	for _, h := range s.Hosts.Controllers() {
		byName[h.Spec] = h
	}
	order := vip.Order(s.Cluster)
	settings := v.KeepalivedSettings()
	p.files = map[*node.Host][]vipFile{}
	for i, spec := range order {
		h := byName[spec]
		if h == nil || h.Conn == nil {
			continue
		}
		eff := h.EffectiveSpec()
		iface := v.Interface
		if iface == "" {
			iface = eff.PrivateInterface
		}
		if iface == "" || eff.PrivateAddress == "" {
			return fmt.Errorf("%s: no private interface and address for keepalived: set spec.hosts[%d].privateInterface and privateAddress, or spec.config.vip.interface", h, h.Index)
		}
		if err := checkVIPSubnet(ctx, h, iface, prefix.Addr()); err != nil {
			return err
		}
		var peers []string
		for _, o := range order {
			if o != spec {
				if oh := byName[o]; oh != nil {
					peers = append(peers, oh.EffectiveSpec().PrivateAddress)
				}
			}
		}
		k := vip.Keepalived{
			Cluster: s.Cluster.Metadata.Name, Host: h.String(), Interface: iface, Address: eff.PrivateAddress,
			Peers: peers, Priority: vip.PriorityOf(i), VIP: prefix, Settings: settings,
		}
		conf, err := k.Config()
		if err != nil {
			return err
		}
		check := s.Engine.Kubectl("--server="+apiURL(eff.PrivateAddress, s.Engine.APIPort()), "--request-timeout="+fmt.Sprintf("%ds", settings.Check.Timeout), "get", "--raw=/readyz")
		p.files[h] = []vipFile{
			{path: vip.CheckScriptPath, data: vip.CheckScript(check), mode: 0o700},
			{path: vip.ConfigPath, data: conf, mode: 0o600},
		}
	}
	return nil
}

func apiURL(addr string, port int) string {
	if a, err := netip.ParseAddr(addr); err == nil && a.Is6() {
		addr = "[" + addr + "]"
	}
	return fmt.Sprintf("https://%s:%d", addr, port)
}

// checkVIPSubnet refuses a VIP no network of the interface holds: keepalived
// would add it, and no neighbour would route to it.
func checkVIPSubnet(ctx context.Context, h *node.Host, iface string, addr netip.Addr) error {
	out, err := h.Conn.Run(ctx, shell.Join("ip", "-o", "addr", "show", "dev", iface))
	if err != nil {
		return fmt.Errorf("%s: reading the addresses of %s for the VIP: %w", h, iface, err)
	}
	var nets []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "inet" && f[i] != "inet6" {
				continue
			}
			p, err := netip.ParsePrefix(f[i+1])
			if err != nil {
				continue
			}
			if p.Masked().Contains(addr) && p.Bits() < addr.BitLen() {
				return nil
			}
			nets = append(nets, p.Masked().String())
		}
	}
	return fmt.Errorf("%s: the VIP %s (spec.config.vip.address) is in no network of %s (%s): no neighbour would reach it there; pick an address in the controllers' subnet or set spec.config.vip.interface",
		h, addr, iface, strings.Join(nets, ", "))
}

// ShouldRun implements Conditional.
func (p *ConfigureVIP) ShouldRun() bool { return len(p.files) > 0 || len(p.retire) > 0 }

func (p *ConfigureVIP) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { return len(p.files[h]) > 0 })
}

// Plan implements Planner.
func (p *ConfigureVIP) Plan(ctx context.Context) ([]node.Change, error) {
	retired := p.planRetired()
	changes, err := node.Collect(ctx, p.hosts(), p.state.Options.Concurrency, func(ctx context.Context, h *node.Host) ([]node.Change, error) {
		var out []node.Change
		for _, f := range p.files[h] {
			b, err := host.ReadFile(ctx, h.Conn, f.path)
			if err != nil || string(b) != string(f.data) {
				out = append(out, node.Change{Host: h.String(), What: "write " + f.path})
			}
		}
		if !serviceActive(ctx, h, vip.Service) || len(out) > 0 {
			out = append(out, node.Change{Host: h.String(), What: "start keepalived"})
		}
		return out, nil
	})
	return append(retired, changes...), err
}

// Run implements Phase: install keepalived from the package's own files if
// it is not there, write its files, and start it, or reload it when its
// configuration changed.
func (p *ConfigureVIP) Run(ctx context.Context) error {
	s := p.state
	// The old provider goes first: two announcing one address would fight.
	if err := p.runRetired(ctx); err != nil {
		return err
	}
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		if err := s.InstallPackages(ctx, h, p.Title()); err != nil {
			return err
		}
		if _, err := h.Conn.Run(ctx, "command -v keepalived >/dev/null || test -x /usr/sbin/keepalived"); err != nil {
			return fmt.Errorf("%s: keepalived is not installed and the package carries none for this host: add keepalived and its dependencies as .deb or .rpm files with selector profile controller to the distro's spec.config.os.files (docs/ha.md)", h)
		}
		changed := false
		for _, f := range p.files[h] {
			c, err := host.WriteFile(ctx, h.Conn, f.path, f.data, f.mode, "root:root")
			if err != nil {
				return err
			}
			if c {
				changed = true
				s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: "wrote " + f.path})
			}
		}
		switch {
		case !serviceActive(ctx, h, vip.Service):
			if _, err := h.Conn.Sudo(ctx, shell.Join("systemctl", "enable", "--now", vip.Service)); err != nil {
				return fmt.Errorf("starting keepalived: %w", err)
			}
			s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: "started keepalived"})
		case changed:
			if _, err := h.Conn.Sudo(ctx, shell.Join("systemctl", "reload-or-restart", vip.Service)); err != nil {
				return fmt.Errorf("reloading keepalived: %w", err)
			}
			s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: "reloaded keepalived"})
		}
		return nil
	})
}

// serviceActive says a systemd unit is active (or on its way there).
func serviceActive(ctx context.Context, h *node.Host, unit string) bool {
	out, _ := h.Conn.Run(ctx, shell.Join("systemctl", "is-active", unit))
	switch strings.TrimSpace(out) {
	case "active", "reloading", "activating":
		return true
	}
	return false
}
