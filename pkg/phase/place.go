package phase

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// placement is one file to put on one host.
type placement struct {
	name     string // what it is, for the report
	target   string
	staged   bool // an executable waits at stagedPath until installed
	mode     os.FileMode
	owner    string
	sha256   string
	size     int64
	symlinks []string
	open     func() (io.ReadCloser, error)
}

// StagedFile is an executable uploaded beside its target and not yet moved
// into place: the initialize and upgrade phases install it on the hosts
// they touch, Install staged files on the rest.
type StagedFile struct {
	Staged, Target string
	Symlinks       []string
}

// stagedPath keeps a staged file on the target's filesystem, so installing
// it is an atomic rename.
func stagedPath(target string) string {
	return path.Join(path.Dir(target), "."+path.Base(target)+".cargoship-staged")
}

// entryPlacement turns a package entry into a placement at target.
func (s *State) entryPlacement(e pkgfile.Entry, target string) placement {
	owner := ""
	if e.User != "" || e.Group != "" {
		owner = e.User + ":" + e.Group
	}
	if e.IsDirectory {
		target = path.Join(target, path.Base(e.Name))
	}
	return placement{
		name: e.Name, target: target, staged: e.Executable,
		mode: e.Mode.Perm(), owner: owner, sha256: e.SHA256, size: e.Size, symlinks: e.Symlinks,
		open: func() (io.ReadCloser, error) { return s.Package.OpenEntry(e.Name) },
	}
}

// placed is what placing a file did on a host.
type placed struct {
	uploaded bool  // bytes moved or the file was rewritten
	sent     int64 // bytes that crossed the wire
	staged   *StagedFile
}

// place puts one file on a host, skipping it when the host already has it.
// An executable already in place needs nothing; one already staged needs
// only installing.
func (s *State) place(ctx context.Context, h *Host, pl placement) (placed, error) {
	if pl.staged {
		have, _, err := host.FileSHA256(ctx, h.Conn, pl.target)
		if err != nil {
			return placed{}, fmt.Errorf("%s: %w", pl.target, err)
		}
		if have == pl.sha256 {
			return placed{}, nil
		}
	}
	dst := pl.target
	if pl.staged {
		dst = stagedPath(pl.target)
	}
	res, err := host.Upload(ctx, h.Conn, host.Source(pl.open), pl.size, pl.sha256, dst, pl.mode, pl.owner)
	if err != nil {
		return placed{}, fmt.Errorf("uploading %s to %s: %w", pl.name, dst, err)
	}
	out := placed{uploaded: !res.Skipped, sent: res.BytesSent}
	if pl.staged {
		out.staged = &StagedFile{Staged: dst, Target: pl.target, Symlinks: pl.symlinks}
	}
	return out, nil
}

// wouldPlace reports, reading only, whether placing pl would change h.
func (s *State) wouldPlace(ctx context.Context, h *Host, pl placement) (bool, error) {
	have, _, err := host.FileSHA256(ctx, h.Conn, pl.target)
	if err != nil {
		return false, fmt.Errorf("%s: %w", pl.target, err)
	}
	return have != pl.sha256, nil
}

// record adds what placing did to the report.
func (s *State) record(h *Host, phase string, pl placement, p placed) {
	switch {
	case p.uploaded && pl.staged:
		s.Report.Add(Change{Host: h.String(), Phase: phase, What: fmt.Sprintf("staged %s for %s (%s)", pl.name, pl.target, pl.mode), Bytes: p.sent})
	case p.uploaded:
		s.Report.Add(Change{Host: h.String(), Phase: phase, What: fmt.Sprintf("uploaded %s to %s (%s)", pl.name, pl.target, pl.mode), Bytes: p.sent})
	}
}

// placeAll places files on one host in order, queues staged ones, links
// the rest, and reloads systemd when a unit file changed.
func (s *State) placeAll(ctx context.Context, h *Host, phaseTitle string, pls []placement) error {
	units := false
	for _, pl := range pls {
		p, err := s.place(ctx, h, pl)
		if err != nil {
			return err
		}
		s.record(h, phaseTitle, pl, p)
		if p.staged != nil {
			s.queueStaged(h, *p.staged)
			continue
		}
		if err := s.linkAll(ctx, h, pl.target, pl.symlinks); err != nil {
			return err
		}
		units = units || p.uploaded && isUnitFile(pl.target)
	}
	if units {
		return daemonReload(ctx, h)
	}
	return nil
}

// planAll lists what placing files would change on one host.
func (s *State) planAll(ctx context.Context, h *Host, pls []placement) ([]Change, error) {
	var out []Change
	for _, pl := range pls {
		would, err := s.wouldPlace(ctx, h, pl)
		if err != nil {
			return nil, err
		}
		if would {
			out = append(out, Change{Host: h.String(), What: fmt.Sprintf("upload %s to %s (%d bytes, %s)", pl.name, pl.target, pl.size, pl.mode)})
		}
	}
	return out, nil
}

// queueStaged remembers a staged file for the install phases.
func (s *State) queueStaged(h *Host, f StagedFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Staged = append(h.Staged, f)
}
