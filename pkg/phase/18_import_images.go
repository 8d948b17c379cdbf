package phase

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// importedDir keeps, per image archive, the sha256 last imported, so an
// archive already in the image store is not imported again.
const importedDir = "/var/lib/cargoship/images-imported"

// ImportImages imports the uploaded image archive into the engine's image
// store, for an engine that does not pick up its images directory by itself
// (upstream kubeadm with containerd). k3s and rke2 import on start.
type ImportImages struct {
	base
	archive map[*node.Host]pkgfile.Entry
}

// Title implements Phase.
func (p *ImportImages) Title() string { return "Import images" }

// Prepare implements Preparer.
func (p *ImportImages) Prepare(_ context.Context) error {
	s := p.state
	p.archive = map[*node.Host]pkgfile.Entry{}
	if s.Engine.ImportsImagesDirByItself() {
		return nil
	}
	for _, h := range s.Hosts {
		for _, e := range s.Package.EntriesOf(pkgfile.KindImages) {
			if e.Architecture == h.Facts.Arch {
				p.archive[h] = e
			}
		}
	}
	return nil
}

// ShouldRun implements Conditional.
func (p *ImportImages) ShouldRun() bool { return len(p.archive) > 0 }

func (p *ImportImages) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { _, ok := p.archive[h]; return ok })
}

// marker is where the last imported sha256 of an archive is recorded.
func marker(e pkgfile.Entry) string { return path.Join(importedDir, path.Base(e.Name)+".sha256") }

// imported reports whether the host's store already holds this archive.
func (p *ImportImages) imported(ctx context.Context, h *node.Host, e pkgfile.Entry) (bool, error) {
	b, err := host.ReadFile(ctx, h.Conn, marker(e))
	if err != nil {
		return false, nil //nolint:nilerr // no marker: never imported
	}
	return strings.TrimSpace(string(b)) == e.SHA256, nil
}

// Plan implements Planner.
func (p *ImportImages) Plan(ctx context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, h := range p.hosts() {
		e := p.archive[h]
		done, err := p.imported(ctx, h, e)
		if err != nil {
			return nil, err
		}
		if !done {
			out = append(out, node.Change{Host: h.String(), What: fmt.Sprintf("import %d image(s) from %s", len(e.Images), path.Base(e.Name))})
		}
	}
	return out, nil
}

// Run implements Phase.
func (p *ImportImages) Run(ctx context.Context) error {
	s := p.state
	return p.hosts().Parallel(ctx, s.Options.Concurrency, func(ctx context.Context, h *node.Host) error {
		e := p.archive[h]
		done, err := p.imported(ctx, h, e)
		if err != nil || done {
			return err
		}
		// The image store's runtime comes from the package: install its
		// packages now, and on a host whose engine does not run yet its
		// staged executables too (the binary route's containerd and ctr
		// are among them; phase 20 would install them anyway), then make
		// sure it runs. A running node's staged executables wait for the
		// phases that swap them in order (upgrade, install staged).
		install := s.InstallPackages
		if !h.EngineRunning {
			install = s.InstallPending
		}
		if err := install(ctx, h, p.Title()); err != nil {
			return err
		}
		if _, err := h.Conn.Sudo(ctx, "systemctl start containerd"); err != nil {
			return fmt.Errorf("starting containerd for the import: %w", err)
		}
		file := path.Join(s.ImagesDir(), path.Base(e.Name))
		if _, err := h.Conn.Sudo(ctx, importCommand(file, s.Engine.ImportImagesCommand("-"))); err != nil {
			return fmt.Errorf("importing %s: %w", file, err)
		}
		if _, err := host.WriteFile(ctx, h.Conn, marker(e), []byte(e.SHA256+"\n"), 0o644, ""); err != nil {
			return err
		}
		s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: fmt.Sprintf("imported %d image(s) from %s", len(e.Images), path.Base(e.Name))})
		return nil
	})
}

// importCommand decompresses an archive into an import reading stdin:
// containerd's ctr takes only a plain tar.
func importCommand(file, importStdin string) string {
	decompress := "cat"
	switch {
	case strings.HasSuffix(file, ".zst"):
		decompress = "zstd -dc"
	case strings.HasSuffix(file, ".gz"):
		decompress = "gzip -dc"
	}
	return host.Script(decompress+` "$1" | `+importStdin, file)
}
