package phase

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// UploadFiles uploads the distro-agnostic files to every host: the
// definition's files, the image archive for the host's architecture, and
// the inventory's own files for that host.
type UploadFiles struct {
	state *State
	plans map[*Host][]placement
}

// Title implements Phase.
func (p *UploadFiles) Title() string { return "Upload files to hosts" }

// Prepare implements Preparer: it decides every host's files, reading only.
func (p *UploadFiles) Prepare(_ context.Context, s *State) error {
	p.state = s
	p.plans = map[*Host][]placement{}
	entries := s.Package.Entries()
	for _, h := range s.Hosts {
		var pls []placement
		for _, e := range commonEntries(entries, h) {
			target := e.Target
			if e.Kind == pkgfile.KindImages {
				target = s.ImagesDir() // a directory entry: the archive goes into it
			}
			pls = append(pls, s.entryPlacement(e, target))
		}
		for i, f := range h.Spec.Files {
			pl, err := s.hostFilePlacement(h, i, f)
			if err != nil {
				return err
			}
			pls = append(pls, pl)
		}
		if len(pls) > 0 {
			p.plans[h] = pls
		}
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *UploadFiles) ShouldRun() bool { return len(p.plans) > 0 }

// Plan implements Planner.
func (p *UploadFiles) Plan(ctx context.Context) ([]Change, error) {
	return p.state.planHosts(ctx, p.plans)
}

// Run implements Phase.
func (p *UploadFiles) Run(ctx context.Context) error {
	s := p.state
	return s.Hosts.Filter(func(h *Host) bool { return len(p.plans[h]) > 0 }).Parallel(ctx, s.Options.UploadConcurrency, func(ctx context.Context, h *Host) error {
		return s.placeAll(ctx, h, p.Title(), p.plans[h])
	})
}

// ImagesDir is where image archives go: the definition's imageConfig.path,
// else the engine's own images directory.
func (s *State) ImagesDir() string {
	if d := s.Distro.Spec.Config.ImageConfig.Path; d != "" {
		return d
	}
	return s.Engine.Paths().ImagesDir
}

// hostFilePlacement places one of the inventory's files for a host: inline
// data, or a local file relative to the inventory.
func (s *State) hostFilePlacement(h *Host, i int, f v1alpha1.HostFile) (placement, error) {
	where := fmt.Sprintf("%s: spec.hosts[%d].files[%d] (%s)", h, h.Index, i, f.Name)
	mode, err := f.Perm.Mode(0o644)
	if err != nil {
		return placement{}, fmt.Errorf("%s: %w", where, err)
	}
	owner := ""
	if f.User != "" || f.Group != "" {
		owner = f.User + ":" + f.Group
	}
	pl := placement{name: "file " + f.Name, target: f.Dst, mode: os.FileMode(mode), owner: owner}
	if f.Data != "" {
		data := []byte(f.Data)
		sum := sha256.Sum256(data)
		pl.sha256, pl.size = hex.EncodeToString(sum[:]), int64(len(data))
		pl.open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		return pl, nil
	}
	src := f.Src
	if !filepath.IsAbs(src) {
		src = filepath.Join(s.ClusterDir, src)
	}
	sum, size, err := hashFile(src)
	if err != nil {
		return placement{}, fmt.Errorf("%s: src: %w", where, err)
	}
	if f.DstDir != "" {
		pl.target = path.Join(f.DstDir, filepath.Base(src))
	}
	pl.sha256, pl.size = sum, size
	pl.open = func() (io.ReadCloser, error) { return os.Open(src) }
	return pl, nil
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// planHosts runs planAll on every host with placements, in parallel.
func (s *State) planHosts(ctx context.Context, plans map[*Host][]placement) ([]Change, error) {
	var mu sync.Mutex
	var out []Change
	err := s.Hosts.Filter(func(h *Host) bool { return len(plans[h]) > 0 }).Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *Host) error {
		c, err := s.planAll(ctx, h, plans[h])
		mu.Lock()
		out = append(out, c...)
		mu.Unlock()
		return err
	})
	return out, err
}
