package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Placement is one file to put on one host.
type Placement struct {
	Name     string // what it is, for the report
	Target   string
	Staged   bool // an executable waits at StagedPath until installed
	Mode     os.FileMode
	Owner    string
	SHA256   string
	Size     int64
	Symlinks []string
	Open     func() (io.ReadCloser, error)
	// Keep leaves the file out of the placement record, so a reset
	// leaves it on the host (an SELinux module's file, docs/reset.md).
	Keep bool
}

// StagedFile is an executable uploaded beside its target and not yet moved
// into place: the initialize and upgrade phases install it on the hosts
// they touch, Install staged files on the rest.
type StagedFile struct {
	Staged, Target string
	Symlinks       []string
}

// StagedPath keeps a staged file on the target's filesystem, so installing
// it is an atomic rename.
func StagedPath(target string) string {
	return path.Join(path.Dir(target), "."+path.Base(target)+".cargoship-staged")
}

// EntryPlacement turns a package entry into a Placement at target.
func (s *Fleet) EntryPlacement(e pkgfile.Entry, target string) Placement {
	owner := ""
	if e.User != "" || e.Group != "" {
		owner = e.User + ":" + e.Group
	}
	if e.IsDirectory {
		target = path.Join(target, path.Base(e.Name))
	}
	return Placement{
		Name: e.Name, Target: target, Staged: e.Executable,
		Mode: e.Mode.Perm(), Owner: owner, SHA256: e.SHA256, Size: e.Size, Symlinks: e.Symlinks,
		Open: func() (io.ReadCloser, error) { return s.Package.OpenEntry(e.Name) },
		// a module's file stays with the module it installed
		Keep: e.Kind == pkgfile.KindSELinux,
	}
}

// placed is what placing a file did on a host.
type placed struct {
	uploaded bool  // bytes moved or the file was rewritten
	sent     int64 // bytes that crossed the wire
	staged   *StagedFile
	// relayedFrom names the host the file came from, "" when it was
	// sent from here (fan-out).
	relayedFrom string
}

// Place puts one file on a host, skipping it when the host already has it.
// An executable already in place needs nothing; one already staged needs
// only installing.
func (s *Fleet) Place(ctx context.Context, h *Host, pl Placement) (placed, error) {
	return s.place(ctx, h, h.Conn, pl)
}

// place is Place asking h through r (PlaceAll's prefetched answers).
func (s *Fleet) place(ctx context.Context, h *Host, r host.Runner, pl Placement) (placed, error) {
	fan := s.fanoutFor(ctx, h, pl)
	if pl.Staged {
		have, _, err := host.FileSHA256(ctx, r, pl.Target)
		if err != nil {
			return placed{}, fmt.Errorf("%s: %w", pl.Target, err)
		}
		if have == pl.SHA256 {
			if fan != nil {
				fan.done(pl.Target, true)
			}
			return placed{}, nil
		}
	}
	dst := pl.Target
	if pl.Staged {
		dst = StagedPath(pl.Target)
	}
	var opts []host.UploadOption
	if fan != nil {
		opts = append(opts, fan.option())
	}
	var track *uploadTracking
	if p := progressFrom(ctx); p != nil {
		defer beginUploads(ctx, h)()
		track = &uploadTracking{p: p, host: h.String(), name: pl.Name, size: pl.Size}
		opts = append(opts, host.WrapSend(track.wrap))
	}
	res, err := host.Upload(ctx, r, host.Source(pl.Open), pl.Size, pl.SHA256, dst, pl.Mode, pl.Owner, opts...)
	if track != nil {
		track.done(err)
	}
	if fan != nil {
		fan.done(dst, err == nil)
		if res.PeerErr != nil {
			s.Report.Note("fan-out: %s could not get %s from %s (%v); it was sent from here", h, pl.Name, fan.peerName(), res.PeerErr)
		}
	}
	if err != nil {
		return placed{}, fmt.Errorf("uploading %s to %s: %w", pl.Name, dst, err)
	}
	if res.ResumedAt > 0 {
		s.Logger().Info("resumed a broken upload", "host", h.String(), "file", dst, "kept", res.ResumedAt, "sent", res.BytesSent, "size", pl.Size)
	}
	out := placed{uploaded: !res.Skipped, sent: res.BytesSent}
	if res.Relayed && fan != nil {
		out.relayedFrom = fan.from
	}
	if pl.Staged {
		out.staged = &StagedFile{Staged: dst, Target: pl.Target, Symlinks: pl.Symlinks}
	}
	return out, nil
}

// WouldPlace reports, reading only, whether placing pl would change h.
func (s *Fleet) WouldPlace(ctx context.Context, h *Host, pl Placement) (bool, error) {
	return wouldPlace(ctx, h.Conn, pl)
}

// wouldPlace is WouldPlace asking through r (PlanAll's prefetched answers).
func wouldPlace(ctx context.Context, r host.Runner, pl Placement) (bool, error) {
	have, _, err := host.FileSHA256(ctx, r, pl.Target)
	if err != nil {
		return false, fmt.Errorf("%s: %w", pl.Target, err)
	}
	if have == pl.SHA256 || !pl.Staged {
		return have != pl.SHA256, nil
	}
	// A staged copy that is already right is not sent again (Place's
	// upload skips it); what it waits for is Install staged files.
	staged, _, err := host.FileSHA256(ctx, r, StagedPath(pl.Target))
	if err != nil {
		return false, fmt.Errorf("%s: %w", StagedPath(pl.Target), err)
	}
	return staged != pl.SHA256, nil
}

func (p placed) relayNote() string {
	if p.relayedFrom == "" {
		return ""
	}
	return ", relayed from " + p.relayedFrom
}

// fanoutFor is the phase's fan-out for one file on h, nil when the file
// goes from here anyway: no fan-out in ctx, a small file, or a host with
// no private address for a peer to reach.
func (s *Fleet) fanoutFor(ctx context.Context, h *Host, pl Placement) *fanout {
	r := relaysFrom(ctx)
	if r == nil || pl.Size < RelayMinSize || pl.SHA256 == "" || h.Facts.PrivateAddress == "" {
		return nil
	}
	return &fanout{r: r, h: h, sum: pl.SHA256}
}

// record adds what placing did to the report.
func (s *Fleet) record(h *Host, phase string, pl Placement, p placed) {
	switch {
	case p.uploaded && pl.Staged:
		s.Report.Add(Change{Host: h.String(), Phase: phase, What: fmt.Sprintf("staged %s for %s (%s)%s", pl.Name, pl.Target, pl.Mode, p.relayNote()), Bytes: p.sent})
	case p.uploaded:
		s.Report.Add(Change{Host: h.String(), Phase: phase, What: fmt.Sprintf("uploaded %s to %s (%s)%s", pl.Name, pl.Target, pl.Mode, p.relayNote()), Bytes: p.sent})
	}
}

// PlaceAll places files on one host in order, queues staged ones, links
// the rest, and reloads systemd when a unit file changed.
// What was placed goes in the host's placement record, also when a later
// file fails: a reset removes only what the record lists.
func (s *Fleet) PlaceAll(ctx context.Context, h *Host, phaseTitle string, pls []Placement) (err error) {
	// one batch for all of the host's files: a terminal keeps one bar
	// for the host, and draws it to the end before the phase goes on
	defer beginUploads(ctx, h)()
	r := host.Prefetch(ctx, h.Conn, append(placeProbes(pls), recordProbes(pls)...))
	var done []Placement
	defer func() {
		if rerr := recordPlaced(ctx, r, done); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	units := false
	for _, pl := range pls {
		p, err := s.place(ctx, h, r, pl)
		if err != nil {
			return err
		}
		s.record(h, phaseTitle, pl, p)
		if p.staged != nil {
			// its links are made when it is installed, to this target
			done = append(done, pl)
			s.QueueStaged(h, *p.staged)
			continue
		}
		if err := linkAll(ctx, r, pl.Target, pl.Symlinks); err != nil {
			pl.Symlinks = nil
			done = append(done, pl)
			return err
		}
		done = append(done, pl)
		units = units || p.uploaded && IsUnitFile(pl.Target)
	}
	if units {
		return DaemonReload(ctx, h)
	}
	return nil
}

// PlanAll lists what placing files would change on one host.
func (s *Fleet) PlanAll(ctx context.Context, h *Host, pls []Placement) ([]Change, error) {
	var out []Change
	r := host.Prefetch(ctx, h.Conn, planProbes(pls))
	for _, pl := range pls {
		would, err := wouldPlace(ctx, r, pl)
		if err != nil {
			return nil, err
		}
		if would {
			out = append(out, Change{Host: h.String(), What: fmt.Sprintf("upload %s to %s (%s, %s)", pl.Name, pl.Target, HumanBytes(pl.Size), pl.Mode)})
		}
	}
	return out, nil
}

// QueueStaged remembers a staged file for the install phases.
func (s *Fleet) QueueStaged(h *Host, f StagedFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.Staged = append(h.Staged, f)
}

// ImagesDir is where image archives go: the definition's imageConfig.path,
// else the engine's own images directory.
func (s *Fleet) ImagesDir() string {
	if d := s.Distro.Spec.Config.ImageConfig.Path; d != "" {
		return d
	}
	return s.Engine.Paths().ImagesDir
}

// HostFilePlacement places one of the inventory's files for a host: inline
// data, or a local file relative to the inventory.
func (s *Fleet) HostFilePlacement(h *Host, i int, f v1alpha1.HostFile) (Placement, error) {
	where := fmt.Sprintf("%s: spec.hosts[%d].files[%d] (%s)", h, h.Index, i, f.Name)
	mode, err := f.Perm.Mode(0o644)
	if err != nil {
		return Placement{}, fmt.Errorf("%s: %w", where, err)
	}
	owner := ""
	if f.User != "" || f.Group != "" {
		owner = f.User + ":" + f.Group
	}
	pl := Placement{Name: "file " + f.Name, Target: f.Dst, Mode: os.FileMode(mode), Owner: owner}
	if f.Data != "" {
		data := []byte(f.Data)
		sum := sha256.Sum256(data)
		pl.SHA256, pl.Size = hex.EncodeToString(sum[:]), int64(len(data))
		pl.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		return pl, nil
	}
	src := f.Src
	if !filepath.IsAbs(src) {
		src = filepath.Join(s.ClusterDir, src)
	}
	sum, size, err := fetch.HashFile(src)
	if err != nil {
		return Placement{}, fmt.Errorf("%s: src: %w", where, err)
	}
	if f.DstDir != "" {
		pl.Target = path.Join(f.DstDir, filepath.Base(src))
	}
	pl.SHA256, pl.Size = sum, size
	pl.Open = func() (io.ReadCloser, error) { return os.Open(src) }
	return pl, nil
}

// PlanHosts runs PlanAll on every host with placements, in parallel.
func (s *Fleet) PlanHosts(ctx context.Context, plans map[*Host][]Placement) ([]Change, error) {
	planned := s.Hosts.Filter(func(h *Host) bool { return len(plans[h]) > 0 })
	return Collect(ctx, planned, s.Options.Concurrency, func(ctx context.Context, h *Host) ([]Change, error) {
		return s.PlanAll(ctx, h, plans[h])
	})
}
