package node

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// InstallStaged moves a host's staged executables into place (an atomic
// rename on the target's filesystem), creates their symlinks, restores
// their SELinux labels where SELinux is enabled, and reloads systemd when
// a unit changed.
func (s *Fleet) InstallStaged(ctx context.Context, h *Host, phaseTitle string) error {
	return s.installStaged(ctx, h, phaseTitle, nil)
}

// installStaged installs the staged executables whose base name is in
// only (all when only is nil) and leaves the rest staged.
func (s *Fleet) installStaged(ctx context.Context, h *Host, phaseTitle string, only []string) error {
	s.mu.Lock()
	var staged, rest []StagedFile
	for _, f := range h.Staged {
		if only == nil || slices.Contains(only, path.Base(f.Target)) {
			staged = append(staged, f)
		} else {
			rest = append(rest, f)
		}
	}
	h.Staged = rest
	s.mu.Unlock()
	for _, f := range staged {
		// host.Rename gives the target a new mtime: fapolicyd would
		// otherwise keep the staged name it cached when the file was last
		// read, and a path= rule for the target would not let it run
		// (docs/reference/hosts.md §7.4).
		if err := host.Rename(ctx, h.Conn, f.Staged, f.Target); err != nil {
			return fmt.Errorf("installing %s: %w", f.Target, err)
		}
		if err := s.LinkAll(ctx, h, f.Target, f.Symlinks); err != nil {
			return err
		}
		if err := Relabel(ctx, h, append([]string{f.Target}, f.Symlinks...)...); err != nil {
			return err
		}
		s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: "installed " + f.Target})
	}
	return nil
}

// LinkAll points each link at target; an existing right link is left.
func (s *Fleet) LinkAll(ctx context.Context, h *Host, target string, links []string) error {
	return linkAll(ctx, h.Conn, target, links)
}

// linkCheck succeeds when the link $2 already points at $1.
const linkCheck = `[ "$(readlink "$2")" = "$1" ]`

// linkAll is LinkAll through r: a link a prefetched linkCheck found right
// costs no round trip.
func linkAll(ctx context.Context, r host.Runner, target string, links []string) error {
	for _, l := range links {
		if _, err, ok := host.Prefetched(r, host.Script(linkCheck, target, l)); ok && err == nil {
			continue
		}
		script := linkCheck + ` || { mkdir -p "$(dirname "$2")" && ln -sfn "$1" "$2"; }`
		if _, err := r.Sudo(ctx, host.Script(script, target, l)); err != nil {
			return fmt.Errorf("linking %s to %s: %w", l, target, err)
		}
	}
	return nil
}

// IsUnitFile says a path is a systemd unit, after which systemd reloads.
func IsUnitFile(p string) bool {
	return strings.Contains(p, "/systemd/system/") && (path.Ext(p) == ".service" || path.Ext(p) == ".socket" || path.Ext(p) == ".timer")
}

// DaemonReload makes systemd read changed unit files.
func DaemonReload(ctx context.Context, h *Host) error {
	if _, err := h.Conn.Sudo(ctx, "systemctl daemon-reload"); err != nil {
		return fmt.Errorf("systemctl daemon-reload: %w", err)
	}
	return nil
}

// PackagesMissing lists the package files whose package is not installed at
// that version. A file not on the host yet counts as missing; a signing
// key (hostos.IsRPMKey) is not a package and is never listed.
func (s *Fleet) PackagesMissing(ctx context.Context, h *Host, files []string) ([]string, error) {
	cfg := hostos.For(h.OS)
	var missing []string
	files, _ = hostos.SplitRPMKeys(files)
	for _, f := range files {
		pkg, err := cfg.PackageFile(ctx, h.Conn, f)
		if err != nil {
			missing = append(missing, f)
			continue
		}
		installed, err := cfg.Installed(ctx, h.Conn, pkg.Name)
		if err != nil {
			return nil, fmt.Errorf("is %s installed: %w", pkg.Name, err)
		}
		have := false
		for _, i := range installed {
			if i.Version == pkg.Version {
				have = true
			}
		}
		if !have {
			missing = append(missing, f)
		}
	}
	return missing, nil
}

// InstallPackages installs a host's uploaded package files that are not
// installed yet, from those files only: every repository is disabled. A
// host that awaits its upgrade keeps them queued for the upgrade phases,
// which install them in the engine's order (AwaitsUpgrade).
func (s *Fleet) InstallPackages(ctx context.Context, h *Host, phaseTitle string) error {
	if s.AwaitsUpgrade(h) {
		return nil
	}
	return s.installPackages(ctx, h, phaseTitle, nil)
}

// installPackages installs the queued package files whose package is
// named in only (all when only is nil) and leaves the rest queued.
func (s *Fleet) installPackages(ctx context.Context, h *Host, phaseTitle string, only []string) error {
	s.mu.Lock()
	files := h.Packages
	h.Packages = nil
	s.mu.Unlock()
	if len(files) == 0 {
		return nil
	}
	if only != nil {
		var take, rest []string
		cfg := hostos.For(h.OS)
		for _, f := range files {
			if hostos.IsRPMKey(f) {
				// Every part of an upgrade may need the keys.
				take, rest = append(take, f), append(rest, f)
				continue
			}
			if pkg, err := cfg.PackageFile(ctx, h.Conn, f); err == nil && slices.Contains(only, pkg.Name) {
				take = append(take, f)
			} else {
				rest = append(rest, f)
			}
		}
		s.mu.Lock()
		h.Packages = append(rest, h.Packages...)
		s.mu.Unlock()
		if files = take; len(files) == 0 {
			return nil
		}
	}
	missing, err := s.PackagesMissing(ctx, h, files)
	if err != nil || len(missing) == 0 {
		return err
	}
	cfg := hostos.For(h.OS)
	tool, err := cfg.PackageTool(ctx, h.Conn)
	if err != nil {
		return err
	}
	// Before any of it is installed: the keys imported, signatures and
	// dependencies checked with every repository disabled. The phases run
	// this through Hosts.Parallel and the manager, which name the host and
	// the phase in the error.
	_, keys := hostos.SplitRPMKeys(files)
	if err := hostos.RPMPreflight(ctx, h.Conn, cfg, tool, missing, keys); err != nil {
		return err
	}
	cmd, err := cfg.InstallCommand(tool, missing)
	if err != nil {
		return err
	}
	fresh, err := newPackages(ctx, h, missing)
	if err != nil {
		return err
	}
	if _, err := h.Conn.Sudo(ctx, cmd); err != nil {
		return fmt.Errorf("installing %s: %w", strings.Join(missing, ", "), err)
	}
	if err := recordPackages(ctx, h, fresh); err != nil {
		return err
	}
	s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: fmt.Sprintf("installed %d package(s) with %s: %s", len(missing), tool, strings.Join(missing, ", "))})
	return nil
}

// InstallPending installs everything the upload phases left waiting on a
// host: package files first (they may ship the units), then staged files.
// A host that awaits its upgrade keeps them for InstallUpgrade.
func (s *Fleet) InstallPending(ctx context.Context, h *Host, phaseTitle string) error {
	if s.AwaitsUpgrade(h) {
		return nil
	}
	return s.InstallUpgrade(ctx, h, phaseTitle, nil)
}

// InstallUpgrade installs what an upgrade needs now: the queued packages
// named in only and the staged executables of that base name, or
// everything waiting when only is nil, packages first.
func (s *Fleet) InstallUpgrade(ctx context.Context, h *Host, phaseTitle string, only []string) error {
	if err := s.installPackages(ctx, h, phaseTitle, only); err != nil {
		return err
	}
	return s.installStaged(ctx, h, phaseTitle, only)
}

// AwaitsUpgrade says h runs an engine older than the package's and this run
// has not upgraded it: what was uploaded for it waits for the upgrade
// phases, so no earlier phase swaps a running node's packages under it
// (kubeadm's must go in kubeadm's order, docs/reference/engines.md 7.1),
// and a node the upgrade leaves (--skip-unready-nodes) keeps its version.
func (s *Fleet) AwaitsUpgrade(h *Host) bool {
	if !h.EngineRunning || h.Started || h.EngineVersion == "" || s.Distro == nil {
		return false
	}
	have, err1 := engine.ParseVersion(h.EngineVersion)
	want, err2 := engine.ParseVersion(s.Distro.Spec.Version)
	return err1 == nil && err2 == nil && engine.Compare(have, want) < 0
}

// QueuePackage remembers an uploaded package file for the install phases.
func (s *Fleet) QueuePackage(h *Host, file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Packages = append(h.Packages, file)
}
