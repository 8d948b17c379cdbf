package phase

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// Host is one inventory host during a run: its document entry, its
// connection, and what the phases have learned about it.
type Host struct {
	Spec  *v1alpha1.Host
	Index int
	Conn  host.Runner
	OS    hostos.OS
	Facts Facts
	// EngineVersion is the engine version installed on the host, "" when
	// none is.
	EngineVersion string
	// EngineRunning says the node's engine service is active.
	EngineRunning bool
	// Started says this run started or restarted the engine on the host
	// (initialize or upgrade): later phases leave it alone.
	Started bool
	// Route is the upload phase that claimed the host (rpm, apt, binary),
	// set from the files that phase actually uploaded to it.
	Route string
	// Staged are executables uploaded and waiting to be moved into place.
	Staged []StagedFile
	// Packages are package files uploaded for the host's route, waiting
	// for the package manager.
	Packages []string
}

// Facts are what phases 2 and 3 read off the host.
type Facts struct {
	OSID, OSVersion, OSPretty string
	Family                    string
	Hostname                  string // node name: the inventory's, else the host's
	FQDN                      string
	PrivateAddress            string
	PrivateInterface          string
	Arch                      string
	InitSystem                string
	SELinux                   string // enforcing, permissive, disabled, absent
	Fapolicyd                 bool   // running
	Firewalls                 []FirewallFact
}

// FirewallFact is one firewall front end found on a host.
type FirewallFact struct {
	Name   string
	Active bool
}

// String names the host in messages: the inventory name and address.
func (h *Host) String() string {
	if h.Spec.Hostname != "" && h.Spec.Hostname != h.Spec.Address() {
		return h.Spec.Hostname
	}
	return h.Spec.Address()
}

// NodeName is the name the node registers under.
func (h *Host) NodeName() string {
	if h.Spec.Hostname != "" {
		return h.Spec.Hostname
	}
	return h.Facts.Hostname
}

// IsController reports whether the host runs the engine's server.
func (h *Host) IsController() bool { return h.Spec.IsController() }

// Hosts is a list of run hosts with the filters phases select by.
type Hosts []*Host

// Filter returns the hosts keep accepts.
func (hs Hosts) Filter(keep func(*Host) bool) Hosts {
	var out Hosts
	for _, h := range hs {
		if keep(h) {
			out = append(out, h)
		}
	}
	return out
}

// Controllers returns the controller-type hosts in inventory order.
func (hs Hosts) Controllers() Hosts { return hs.Filter((*Host).IsController) }

// Workers returns the worker hosts in inventory order.
func (hs Hosts) Workers() Hosts {
	return hs.Filter(func(h *Host) bool { return !h.IsController() })
}

// Names lists the hosts' names, for messages.
func (hs Hosts) Names() string {
	n := make([]string, len(hs))
	for i, h := range hs {
		n[i] = h.String()
	}
	return strings.Join(n, ", ")
}

// HostErrors collects per-host failures so one bad host does not hide the
// others.
type HostErrors struct {
	errs map[string]error
}

func (e *HostErrors) Error() string {
	names := make([]string, 0, len(e.errs))
	for n := range e.errs {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 1 {
		return fmt.Sprintf("%s: %v", names[0], e.errs[names[0]])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "failed on %d hosts:", len(names))
	for _, n := range names {
		fmt.Fprintf(&b, "\n - %s: %v", n, e.errs[n])
	}
	return b.String()
}

// Hosts returns the names of the hosts that failed.
func (e *HostErrors) Hosts() []string {
	out := make([]string, 0, len(e.errs))
	for n := range e.errs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Parallel runs fn on every host, at most limit at a time (0 means all at
// once), and returns every host's error, named.
func (hs Hosts) Parallel(ctx context.Context, limit int, fn func(context.Context, *Host) error) error {
	if limit <= 0 || limit > len(hs) {
		limit = len(hs)
	}
	var (
		mu   sync.Mutex
		errs = map[string]error{}
		wg   sync.WaitGroup
		sem  = make(chan struct{}, max(limit, 1))
	)
	for _, h := range hs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			mu.Lock()
			errs[h.String()] = ctx.Err()
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, h); err != nil {
				mu.Lock()
				errs[h.String()] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return &HostErrors{errs: errs}
	}
	return nil
}

// Batches runs fn on hosts in consecutive batches of size (0 means one
// batch); a failed batch stops the ones after it.
func (hs Hosts) Batches(ctx context.Context, size int, fn func(context.Context, *Host) error) error {
	if size <= 0 {
		size = len(hs)
	}
	for start := 0; start < len(hs); start += size {
		batch := hs[start:min(start+size, len(hs))]
		if err := batch.Parallel(ctx, size, fn); err != nil {
			return err
		}
	}
	return nil
}

// Sequential runs fn on each host in order, stopping at the first error.
func (hs Hosts) Sequential(ctx context.Context, fn func(context.Context, *Host) error) error {
	for _, h := range hs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, h); err != nil {
			return fmt.Errorf("%s: %w", h, err)
		}
	}
	return nil
}
