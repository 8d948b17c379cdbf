package phase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// maxClockSkew is how far a host's clock may be from the fleet's median:
// etcd and certificates misbehave beyond it.
const maxClockSkew = 30 * time.Second

// ValidateHosts is the preflight: sudo, unique names and addresses, an
// architecture the package carries, systemd as init, a usable firewall,
// and clock skew.
type ValidateHosts struct {
	readOnly
	base
	now func() time.Time
}

// Title implements Phase.
func (p *ValidateHosts) Title() string { return "Validate hosts" }

// Prepare implements Preparer.
func (p *ValidateHosts) Prepare(_ context.Context) error {
	if p.now == nil {
		p.now = time.Now
	}
	return nil
}

// Run implements Phase.
func (p *ValidateHosts) Run(ctx context.Context) error {
	s := p.state
	var problems []string
	problems = append(problems, p.checkUnique()...)
	skews, err := node.Map(ctx, s.Hosts, s.Options.Concurrency, func(ctx context.Context, h *node.Host) (time.Duration, bool, error) {
		if _, err := h.Conn.Sudo(ctx, "true"); err != nil {
			return 0, false, fmt.Errorf("sudo does not work: %w", err)
		}
		if len(s.Arches) > 0 && !slices.Contains(s.Arches, h.Facts.Arch) {
			return 0, false, fmt.Errorf("the host is %s but the package carries %s; build one with --architecture %s", h.Facts.Arch, strings.Join(s.Arches, ", "), h.Facts.Arch)
		}
		if problem := initProblem(h); problem != "" {
			return 0, false, errors.New(problem)
		}
		if s.Options.UpdateFirewall && len(h.Facts.Firewalls) == 0 {
			return 0, false, fmt.Errorf("--update-firewall is set but the host has no firewall front end (firewalld, ufw or nft)")
		}
		if problem, err := p.decompressorProblem(ctx, h); err != nil || problem != "" {
			return 0, false, cmp.Or(err, errors.New(problem))
		}
		before := p.now()
		out, err := h.Conn.Run(ctx, "date -u +%s")
		if err != nil {
			return 0, false, fmt.Errorf("reading the clock: %w", err)
		}
		after := p.now()
		secs, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("reading the clock: %q is not a time", out)
		}
		local := before.Add(after.Sub(before) / 2)
		return time.Unix(secs, 0).Sub(local), true, nil
	})
	if err != nil {
		problems = append(problems, err.Error())
	}
	problems = append(problems, clockProblems(skews)...)
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s):\n - %s", len(problems), strings.Join(problems, "\n - "))
	}
	return nil
}

// initProblem refuses a host that systemd does not run: the engines'
// units, restarts and daemon-reloads go through systemctl, so an OpenRC
// host (Alpine) would be prepared and then fail at the start phase
// (docs/reference/hosts.md §9.3). Only a host whose facts name another
// init, or an Alpine host, is refused; unknown facts are not a reason.
func initProblem(h *node.Host) string {
	init := h.Facts.InitSystem
	if init == "systemd" || init == "" && h.Facts.Family != v1alpha1.FamilyAlpine {
		return ""
	}
	if init == "" {
		init = "OpenRC"
	}
	return fmt.Sprintf("%s runs %s, not systemd: cargoship drives k3s, rke2 and kubelet through systemd units and systemctl, and does not support OpenRC hosts; use a systemd distribution for this host", h, init)
}

// checkUnique finds node names and private addresses used twice, now that
// discovered values are known.
func (p *ValidateHosts) checkUnique() []string {
	var out []string
	names := map[string]string{}
	addrs := map[string]string{}
	for _, h := range p.state.Hosts {
		if other, dup := names[h.NodeName()]; dup {
			out = append(out, fmt.Sprintf("%s and %s both have the node name %q", other, h, h.NodeName()))
		}
		names[h.NodeName()] = h.String()
		if a := h.Facts.PrivateAddress; a != "" {
			if other, dup := addrs[a]; dup {
				out = append(out, fmt.Sprintf("%s and %s both have the private address %s", other, h, a))
			}
			addrs[a] = h.String()
		}
	}
	return out
}

// clockProblems names the hosts whose clock is off the fleet's median.
func clockProblems(skews map[*node.Host]time.Duration) []string {
	if len(skews) == 0 {
		return nil
	}
	all := make([]time.Duration, 0, len(skews))
	for _, d := range skews {
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	median := all[len(all)/2]
	var out []string
	for h, d := range skews {
		if off := d - median; off > maxClockSkew || off < -maxClockSkew {
			out = append(out, fmt.Sprintf("%s: clock is %s off the fleet's median (more than %s); fix NTP", h, off.Round(time.Second), maxClockSkew))
		}
	}
	sort.Strings(out)
	return out
}
