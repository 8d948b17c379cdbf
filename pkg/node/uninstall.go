package node

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/pkg/shell"
	"github.com/colonel-byte/cargoship/pkg/vip"
)

// ConfigDir is cargoship's own directory on a host.
const ConfigDir = "/etc/cargoship"

// Uninstall is what taking the engine off one node removes: its services
// stopped and disabled, its own clean-up run, then its files, directories
// and the files cargoship placed (docs/reset.md, "What a reset removes").
type Uninstall struct {
	// Units are the engine's services, stopped and disabled where present.
	Units []string
	// Killall stops what the services leave running and unmounts what the
	// engine mounted; it does nothing where the engine is not installed.
	Killall string
	// Paths are removed where present, directories with what they hold.
	Paths []string
	// Links are removed only where they are symbolic links.
	Links []string
}

// UninstallFor is everything a reset removes from h: the engine's own
// files and directories, cargoship's directory, and placed, the targets
// cargoship put on the host (with their staged and partial uploads).
func (s *Fleet) UninstallFor(h *Host, placed []string) Uninstall {
	rm := s.Engine.Removal()
	u := Uninstall{
		Units:   slices.Compact(slices.Sorted(slices.Values(append(s.Engine.Services(true), s.Engine.Services(false)...)))),
		Killall: s.Engine.KillallCommand(),
		Links:   rm.Links,
	}
	paths := append(append(append([]string{}, rm.Files...), rm.Dirs...), ConfigDir, StateDir)
	if v := s.keepalivedVIP(); v != nil && h.IsController() {
		// keepalived is cargoship's, configured by it: a controller that
		// leaves must not keep announcing the cluster's address.
		u.Units = append(u.Units, vip.Service)
		paths = append(paths, vip.ConfigPath, vip.CheckScriptPath)
	}
	for _, p := range append(rm.Files, placed...) {
		paths = append(paths, p, StagedPath(p), p+host.PartSuffix)
	}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(paths))) {
		if !shared(p) {
			u.Paths = append(u.Paths, p)
		}
	}
	return u
}

// shared are directories many things own; no list a reset is given may
// remove one of them, whatever a package's targets say.
func shared(p string) bool {
	p = path.Clean(p)
	switch p {
	case "/etc/rancher", "/var/lib/rancher", "/etc/rancher/node", "/etc/systemd/system", "/usr/local/bin", "/usr/bin", "/opt/bin":
		return true
	}
	return strings.Count(p, "/") < 2 // "/", "/etc", "/usr", "/var"...
}

// presentScript prints the position of each argument that exists: after
// $1 (how many paths come first) the paths, present when they exist at
// all, then the links, present only when they are links. It tests
// existence, not regular files: a directory is present too.
const presentScript = `n=$1; shift
i=0
for p in "$@"; do
  i=$((i+1))
  if [ "$i" -le "$n" ]; then
    if [ -e "$p" ] || [ -L "$p" ]; then echo "$i"; fi
  elif [ -L "$p" ]; then echo "$i"; fi
done`

// present lists which of u's paths and links exist on h.
func (u Uninstall) present(ctx context.Context, r host.Runner) ([]string, error) {
	all := append(append([]string{}, u.Paths...), u.Links...)
	out, err := r.Sudo(ctx, host.Script(presentScript, append([]string{strconv.Itoa(len(u.Paths))}, all...)...))
	if err != nil {
		return nil, fmt.Errorf("looking for the engine's files: %w", err)
	}
	var have []string
	for _, f := range strings.Fields(out) {
		i, err := strconv.Atoi(f)
		if err != nil || i < 1 || i > len(all) {
			return nil, fmt.Errorf("looking for the engine's files: unexpected output %q", out)
		}
		have = append(have, all[i-1])
	}
	return have, nil
}

// installedUnits lists u's units that exist on the host.
func (u Uninstall) installedUnits(ctx context.Context, r host.Runner) ([]string, error) {
	var out []string
	for _, unit := range u.Units {
		if _, err := r.Sudo(ctx, host.Script(`systemctl cat "$1" >/dev/null 2>&1`, unit)); err == nil {
			out = append(out, unit)
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// PlanUninstall lists, reading only, what uninstalling would do on h.
func (s *Fleet) PlanUninstall(ctx context.Context, h *Host, u Uninstall) ([]Change, error) {
	units, err := u.installedUnits(ctx, h.Conn)
	if err != nil {
		return nil, err
	}
	have, err := u.present(ctx, h.Conn)
	if err != nil {
		return nil, err
	}
	pkgs, err := RecordedPackages(ctx, h)
	if err != nil {
		return nil, err
	}
	var out []Change
	if len(units) > 0 || len(have) > 0 || len(pkgs) > 0 {
		out = append(out, Change{Host: h.String(), What: "stop every " + s.Engine.Name() + " process and unmount what it mounted"})
	}
	for _, unit := range units {
		out = append(out, Change{Host: h.String(), What: "stop and disable " + unit})
	}
	for _, p := range pkgs {
		out = append(out, Change{Host: h.String(), What: "remove package " + p + " (installed by cargoship)"})
	}
	for _, p := range have {
		out = append(out, Change{Host: h.String(), What: "remove " + p})
	}
	return out, nil
}

// UninstallNode stops the engine on h and removes u's paths, then checks
// that each is really gone: a path still present fails, named.
func (s *Fleet) UninstallNode(ctx context.Context, h *Host, phaseTitle string, u Uninstall) error {
	add := func(what string) { s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: what}) }
	units, err := u.installedUnits(ctx, h.Conn)
	if err != nil {
		return err
	}
	// The engine's own clean-up first: kubeadm reset needs containerd
	// still running to remove the node's containers.
	if _, err := h.Conn.Sudo(ctx, u.Killall); err != nil {
		return fmt.Errorf("stopping %s's processes: %w", s.Engine.Name(), err)
	}
	for _, unit := range units {
		if _, err := h.Conn.Sudo(ctx, shell.Join("systemctl", "disable", "--now", unit)); err != nil {
			return fmt.Errorf("stopping %s: %w", unit, err)
		}
		add("stopped and disabled " + unit)
	}
	// The packages before the files: the record is in StateDir, and a
	// package's own scripts may still need what the files hold.
	pkgs, err := RecordedPackages(ctx, h)
	if err != nil {
		return err
	}
	if len(pkgs) > 0 {
		if err := removePackages(ctx, h, pkgs); err != nil {
			return err
		}
		add("removed package(s) " + strings.Join(pkgs, ", "))
	}
	have, err := u.present(ctx, h.Conn)
	if err != nil {
		return err
	}
	if len(have) > 0 {
		if _, err := h.Conn.Sudo(ctx, shell.Join(append([]string{"rm", "-rf", "--"}, have...)...)); err != nil {
			return fmt.Errorf("removing the engine's files: %w", err)
		}
	}
	left, err := u.present(ctx, h.Conn)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("still present after removing: %s", strings.Join(left, ", "))
	}
	for _, p := range have {
		add("removed " + p)
	}
	s.mu.Lock()
	h.EngineVersion, h.EngineRunning, h.JoinsThrough = "", false, ""
	s.mu.Unlock()
	if len(units) > 0 || len(pkgs) > 0 {
		return DaemonReload(ctx, h)
	}
	return nil
}

// DeleteNode deletes a node from the cluster through a staying
// controller and waits until it is gone; a node already gone is no error.
func (s *Fleet) DeleteNode(ctx context.Context, name string) error {
	_, err := s.Kubectl(ctx, "delete", "node", name, "--ignore-not-found", "--wait=true", "--timeout="+drainTimeout.String())
	return err
}

// HasNode reports whether the cluster holds a node of that name.
func (s *Fleet) HasNode(ctx context.Context, name string) (bool, error) {
	n, err := s.node(ctx, name)
	return n != nil, err
}

// StateDir is where cargoship keeps what it applied (manifests and their
// markers) on a host.
const StateDir = "/var/lib/cargoship"

// PlacedTargets are the paths cargoship may have placed on h: every
// package entry's target and links (a file the host never got is simply
// absent) and the inventory's own files for h. Without a package, only
// the inventory's files are known.
func (s *Fleet) PlacedTargets(h *Host) []string {
	var out []string
	if s.Package != nil {
		for _, e := range s.Package.Entries() {
			target := e.Target
			if e.Kind == pkgfile.KindImages {
				target = s.ImagesDir()
			}
			if target == "" {
				continue
			}
			pl := s.EntryPlacement(e, target)
			out = append(append(out, pl.Target), pl.Symlinks...)
		}
	}
	for _, f := range h.Spec.Files {
		switch {
		case f.DstDir != "" && f.Src != "":
			out = append(out, path.Join(f.DstDir, path.Base(f.Src)))
		case f.Dst != "":
			out = append(out, f.Dst)
		}
	}
	return out
}

// keepalivedVIP is the cluster's VIP when keepalived announces it.
func (s *Fleet) keepalivedVIP() *v1alpha1.VIP {
	if s.Cluster == nil {
		return nil
	}
	if v := s.Cluster.Spec.Config.VIP; v != nil && v.ProviderName() == v1alpha1.VIPKeepalived {
		return v
	}
	return nil
}
