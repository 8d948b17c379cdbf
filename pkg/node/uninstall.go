package node

import (
	"context"
	"fmt"
	"path"
	"slices"
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
	// Dirs are the engine's state directories and cargoship's own: what
	// is mounted below them is unmounted first, then each is removed with
	// what it holds on its own file system; one that is itself a mount
	// point is emptied and stays mounted.
	Dirs []string
	// Files are the engine's own files (and keepalived's), removed where
	// they are regular files or links, never directories.
	Files []string
	// Links are removed only where they are symbolic links.
	Links []string
	// Guessed are the paths cargoship may have placed, read only on a
	// host with no placement record (placed by an older cargoship).
	Guessed []string
}

// UninstallFor is everything a reset removes from h: the engine's own
// files and directories, cargoship's directories, and what cargoship
// placed: what h's placement record lists or, on a host without one,
// guessed, the paths the package and the inventory name.
func (s *Fleet) UninstallFor(h *Host, guessed []string) Uninstall {
	rm := s.Engine.Removal()
	u := Uninstall{
		Units:   slices.Compact(slices.Sorted(slices.Values(append(s.Engine.Services(true), s.Engine.Services(false)...)))),
		Killall: s.Engine.KillallCommand(),
		Files:   slices.Clone(rm.Files),
		Links:   rm.Links,
	}
	if v := s.keepalivedVIP(); v != nil && h.IsController() {
		// keepalived is cargoship's, configured by it: a controller that
		// leaves must not keep announcing the cluster's address.
		u.Units = append(u.Units, vip.Service)
		u.Files = append(u.Files, vip.ConfigPath, vip.CheckScriptPath)
	}
	for _, p := range append(append([]string{}, rm.Dirs...), ConfigDir, StateDir) {
		if !shared(p) {
			u.Dirs = append(u.Dirs, p)
		}
	}
	u.Dirs = slices.Compact(slices.Sorted(slices.Values(u.Dirs)))
	for _, p := range guessed {
		if !shared(p) {
			u.Guessed = append(u.Guessed, path.Clean(p))
		}
	}
	u.Guessed = slices.Compact(slices.Sorted(slices.Values(u.Guessed)))
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

// removals are u's paths that are not directories, for h as its record
// says (rec, ok=false without one): the engine's files, their staged
// copies and partial uploads, then what cargoship placed, then the
// engine's links. A path is taken by its first rule: the engine's binary
// is the engine's whoever placed it, and a kubectl cargoship placed as a
// file goes as placed, not only were it a link.
func (u Uninstall) removals(rec placedRecord, ok bool) []removal {
	var all []removal
	for _, p := range u.Files {
		for _, q := range []string{p, StagedPath(p), p + host.PartSuffix} {
			all = append(all, removal{kind: anyFile, path: q})
		}
	}
	if ok {
		all = append(all, placedRemovals(rec)...)
	} else {
		all = append(all, guessedRemovals(u.Guessed)...)
	}
	for _, p := range u.Links {
		all = append(all, removal{kind: placedLink, path: p, quiet: true})
	}
	seen := map[string]bool{}
	var out []removal
	for _, r := range all {
		if !seen[r.path] && !u.inDirs(r.path) {
			seen[r.path] = true
			out = append(out, r)
		}
	}
	return out
}

// inDirs says p goes with one of u's directories (an image archive in the
// engine's data directory, a .deb in cargoship's): no rule of its own.
func (u Uninstall) inDirs(p string) bool {
	return slices.ContainsFunc(u.Dirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") })
}

// sweep goes through u's removals, as h's placement record says, then its
// directories: do "plan" only reads what is there, "run" removes it.
// noRecord says h has no record.
func (u Uninstall) sweep(ctx context.Context, h *Host, do string) (files []removeResult, dirs []dirResult, noRecord bool, err error) {
	rec, ok, err := readPlaced(ctx, h.Conn)
	if err != nil {
		return nil, nil, false, err
	}
	if files, err = runRemovals(ctx, h.Conn, do, u.removals(rec, ok)); err != nil {
		return nil, nil, false, err
	}
	// the directories after the files: the record is in StateDir
	if dirs, err = runDirs(ctx, h.Conn, do, u.Dirs); err != nil {
		return nil, nil, false, err
	}
	return files, dirs, !ok && len(u.Guessed) > 0, nil
}

// mountedHere says why a directory is emptied rather than removed.
const mountedHere = " (a file system is mounted there: it stays mounted, so its fstab line still finds it)"

// noRecordNote says what a reset does on a host placed before the record.
func noRecordNote(h *Host) string {
	return fmt.Sprintf("%s: no placement record (%s; placed by an older cargoship): the package's and the inventory's paths are removed only where they are regular files or links in a directory that is no link, never directories", h, PlacedRecord)
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

// PlanUninstall lists, reading only, what uninstalling would do on h;
// what it would leave, and why, goes in the report's notes.
func (s *Fleet) PlanUninstall(ctx context.Context, h *Host, u Uninstall) ([]Change, error) {
	units, err := u.installedUnits(ctx, h.Conn)
	if err != nil {
		return nil, err
	}
	files, dirs, noRecord, err := u.sweep(ctx, h, "plan")
	if err != nil {
		return nil, err
	}
	pkgs, err := RecordedPackages(ctx, h)
	if err != nil {
		return nil, err
	}
	var removes []Change
	for _, d := range dirs {
		switch d.status {
		case "would":
			removes = append(removes, Change{Host: h.String(), What: "remove " + d.dir})
		case "wouldempty":
			removes = append(removes, Change{Host: h.String(), What: "empty " + d.dir + mountedHere})
		}
	}
	for _, f := range files {
		if f.status == "would" {
			removes = append(removes, Change{Host: h.String(), What: "remove " + f.path})
		} else if why := f.why(); why != "" {
			s.Report.Note("%s: would leave %s: %s", h, f.path, why)
		}
	}
	if noRecord {
		s.Report.Note("%s", noRecordNote(h))
	}
	var out []Change
	if len(units) > 0 || len(removes) > 0 || len(pkgs) > 0 {
		out = append(out, Change{Host: h.String(), What: "stop every " + s.Engine.Name() + " process and unmount what it mounted"})
	}
	for _, unit := range units {
		out = append(out, Change{Host: h.String(), What: "stop and disable " + unit})
	}
	for _, p := range pkgs {
		out = append(out, Change{Host: h.String(), What: "remove package " + p + " (installed by cargoship)"})
	}
	return append(out, removes...), nil
}

// UninstallNode stops the engine on h and removes u's paths: what
// cargoship placed only while it is what was placed, the directories
// once nothing is mounted under them. A path rm could not remove, or a
// directory still mounted, fails, named.
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
	files, dirs, noRecord, err := u.sweep(ctx, h, "run")
	if err != nil {
		return err
	}
	if noRecord {
		s.Report.Note("%s", noRecordNote(h))
	}
	var failed []string
	for _, f := range files {
		switch {
		case f.status == "removed":
			add("removed " + f.path)
		case f.reason == "failed":
			failed = append(failed, f.path)
		case f.why() != "":
			s.Report.Note("%s: left %s: %s", h, f.path, f.why())
		}
	}
	for _, d := range dirs {
		for _, m := range d.mounts {
			add("unmounted " + m + " (what it holds stays on its file system)")
		}
		switch {
		case d.status == "removed":
			add("removed " + d.dir)
		case d.status == "emptied":
			add("emptied " + d.dir + mountedHere)
		case d.held != "":
			failed = append(failed, fmt.Sprintf("%s (%s is still mounted there and could not be unmounted)", d.dir, d.held))
		case d.status == "left":
			failed = append(failed, d.dir)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("still present after removing: %s", strings.Join(failed, ", "))
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
