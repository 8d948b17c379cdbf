// Package firewall configures a host's firewall for a cluster through the
// front end the host runs: firewalld, ufw or a table of its own in
// nftables. Every front end reads the current configuration first, so
// Plan says exactly what Apply would do and a second Apply does nothing.
//
// cargoship never enables a firewall: a default-deny firewall switched on
// over the SSH connection a phase runs on can cut that connection. ufw is
// configured only when already active, and the nftables table keeps
// policy accept.
package firewall

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// Front end names, as Status and Firewall.Name report them.
const (
	NameFirewalld = "firewalld"
	NameUFW       = "ufw"
	NameNFTables  = "nftables"
)

// Desired is what the cluster needs from one host's firewall.
type Desired struct {
	// Peers are the private addresses of every other node: trusted.
	Peers []string
	// CIDRs are the engine's pod and service networks: trusted.
	CIDRs []string
	// Ports are opened to everyone (protocol defaults to tcp).
	Ports []v1alpha1.Port
	// Rules admit, drop or reject traffic from a source to a port.
	Rules []v1alpha1.FirewallRule
	// Interface is the host's private interface: firewalld opens the ports
	// in its zone, or in the default zone when it has none.
	Interface string
}

// Action is one change a front end makes.
type Action struct {
	// Summary says what changes, in words.
	Summary string
	// Command is the command line that makes it, "" when Summary is a file
	// write.
	Command string
	// argv is Command's words, for a front end that joins calls.
	argv []string
}

// Plan is what a front end would do (Plan) or did (Apply) on one host.
type Plan struct {
	Actions  []Action
	Warnings []string
}

// Changed reports whether there is anything to do.
func (p Plan) Changed() bool { return len(p.Actions) > 0 }

func (p *Plan) add(summary, cmd string) {
	p.Actions = append(p.Actions, Action{Summary: summary, Command: cmd})
}

func (p *Plan) warnf(format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

// Firewall is one front end.
type Firewall interface {
	// Name is NameFirewalld, NameUFW or NameNFTables.
	Name() string
	// Detect reports whether the front end is installed and running.
	Detect(ctx context.Context, r host.Runner) (present, active bool, err error)
	// Plan reads the host and returns what Apply would change; it changes
	// nothing.
	Plan(ctx context.Context, r host.Runner, d Desired) (Plan, error)
	// Apply makes the host's firewall match d and returns what it changed;
	// on a host that already matches it runs nothing and returns an empty
	// Plan.
	Apply(ctx context.Context, r host.Runner, d Desired) (Plan, error)

	// PlanForget reads the host and returns what Forget would change; it
	// changes nothing.
	PlanForget(ctx context.Context, r host.Runner, addrs []string) (Plan, error)
	// Forget stops trusting the peers addrs (nodes that left the cluster)
	// and changes nothing else, leaving exactly what Apply with those
	// addresses taken out of Desired.Peers leaves, so that a later Apply
	// of the smaller fleet finds nothing to do. It needs no Desired:
	// networks, ports and rules are not known where it runs. A host with
	// no cargoship configuration in this front end, or none of addrs in
	// it, changes nothing; empty addresses are ignored.
	Forget(ctx context.Context, r host.Runner, addrs []string) (Plan, error)
	// PlanRemove reads the host and returns what Remove would change; it
	// changes nothing.
	PlanRemove(ctx context.Context, r host.Runner) (Plan, error)
	// Remove takes out everything cargoship added to this front end, as
	// the front end recognises its own, and nothing else. It never stops,
	// disables or enables the firewall. A host with nothing of cargoship's
	// changes nothing; a second Remove returns an empty Plan.
	Remove(ctx context.Context, r host.Runner) (Plan, error)
}

// All returns every front end, in the order Choose prefers them.
func All() []Firewall { return []Firewall{Firewalld{}, UFW{}, &NFTables{}} }

// Status is one front end as found on a host.
type Status struct {
	Name            string
	Present, Active bool

	// probe is what the front end's detection printed, kept for Choose
	// to prime the chosen front end with.
	probe string
}

// detector is a front end's detection as a script and the parser of what
// it prints, so that DetectAll asks about every front end at once.
type detector interface {
	Firewall
	detectScript() string
	parseDetect(out string) (present, active bool, err error)
}

func detectOne(ctx context.Context, r host.Runner, d detector) (bool, bool, error) {
	out, err := r.Sudo(ctx, host.Script(d.detectScript()))
	if err != nil {
		return false, false, fmt.Errorf("detecting %s: %w", d.Name(), err)
	}
	present, active, err := d.parseDetect(out)
	if err != nil {
		err = fmt.Errorf("detecting %s: %w", d.Name(), err)
	}
	return present, active, err
}

// detectSection starts each front end's part of DetectAll's output.
const detectSection = "@@cargoship-firewall "

// DetectAll asks the host about every front end in one script, each
// front end's probe in a subshell of its own.
func DetectAll(ctx context.Context, r host.Runner) ([]Status, error) {
	var script strings.Builder
	all := All()
	for _, f := range all {
		fmt.Fprintf(&script, "echo '%s%s'\n(\n%s\n)\n", detectSection, f.Name(), f.(detector).detectScript())
	}
	out, err := r.Sudo(ctx, host.Script(script.String()))
	if err != nil {
		return nil, fmt.Errorf("detecting the firewall: %w", err)
	}
	sections := map[string]string{}
	var name string
	for _, line := range strings.SplitAfter(out, "\n") {
		if n, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), detectSection); ok {
			name = n
			continue
		}
		sections[name] += line
	}
	var found []Status
	for _, f := range all {
		probe, ok := sections[f.Name()]
		if !ok {
			return nil, fmt.Errorf("detecting the firewall: no answer about %s in %q", f.Name(), out)
		}
		present, active, err := f.(detector).parseDetect(probe)
		if err != nil {
			return nil, fmt.Errorf("detecting %s: %w", f.Name(), err)
		}
		if present {
			found = append(found, Status{Name: f.Name(), Present: present, Active: active, probe: probe})
		}
	}
	return found, nil
}

// Choose picks the front end to configure: an active firewalld, else an
// active ufw, else cargoship's own nftables table when nft is there (an
// accept there cannot open what another table drops, but its drop rules
// hold, and Plan warns about such tables). Nothing active and no nft
// gives nil. Both firewalld and ufw active is an error: configuring one
// leaves the other dropping cluster traffic, and which one the OS ships
// (firewalld on Enterprise Linux and SUSE, ufw on Ubuntu) says which to
// keep.
func Choose(o hostos.OS, found []Status) (Firewall, error) {
	active := map[string]bool{}
	for _, s := range found {
		active[s.Name] = s.Active
	}
	switch {
	case active[NameFirewalld] && active[NameUFW]:
		keep, stop := NameFirewalld, NameUFW
		if o.Family == v1alpha1.FamilyDebian {
			keep, stop = NameUFW, NameFirewalld
		}
		return nil, fmt.Errorf("both firewalld and ufw are active on this %s host; cargoship configures one front end: keep %s and disable %s", o.Family, keep, stop)
	case active[NameFirewalld]:
		return Firewalld{seenRunning: &once{}}, nil
	case active[NameUFW]:
		for _, s := range found {
			if s.Name == NameUFW {
				return primeUFW(s.probe), nil
			}
		}
		return UFW{}, nil
	case active[NameNFTables]:
		n := &NFTables{}
		for _, s := range found {
			if s.Name == NameNFTables && s.probe != "" {
				if err := n.prime(s.probe); err != nil {
					return nil, err
				}
			}
		}
		return n, nil
	}
	return nil, nil
}

// runScript runs commands as one root shell script that stops at the first
// failure: one round trip however many rules there are.
func runScript(ctx context.Context, r host.Runner, cmds []string) error {
	if len(cmds) == 0 {
		return nil
	}
	script := "set -e\n" + strings.Join(cmds, "\n")
	_, err := r.Sudo(ctx, host.Script(script))
	return err
}
