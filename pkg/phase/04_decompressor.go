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

// decompressorProblem names what stops phase 18 on h before anything is
// installed: an engine that needs its images imported (kubeadm with
// containerd; k3s and rke2 read their images directory themselves), an
// image archive compressed with zstd, and no zstd on the host to
// decompress it for ctr. Minimal Debian and Enterprise Linux installs have
// none (docs/reference/hosts.md §2.8). A zstd package the package itself
// routes to the host counts: phase 16 or 15 installs it before the import.
func (p *ValidateHosts) decompressorProblem(ctx context.Context, h *node.Host) (string, error) {
	s := p.state
	if s.Package == nil || s.Engine == nil || s.Engine.ImportsImagesDirByItself() {
		return "", nil
	}
	var archive string
	for _, e := range s.Package.EntriesOf(pkgfile.KindImages) {
		if e.Architecture == h.Facts.Arch && strings.HasSuffix(e.Name, ".zst") {
			archive = path.Base(e.Name)
		}
	}
	if archive == "" {
		return "", nil
	}
	if _, err := h.Conn.Run(ctx, host.Script(`command -v zstd >/dev/null 2>&1`)); err == nil {
		return "", nil
	} else if ctx.Err() != nil {
		return "", ctx.Err()
	}
	for _, e := range routeEntries(s.Package.Entries(), h.OS.Route(), h) {
		if isZstdPackage(path.Base(e.Name)) {
			return "", nil
		}
	}
	return fmt.Sprintf("the image archive %s is zstd-compressed and the host has no zstd to decompress it for ctr: install zstd on the host, add its package to the distro's OS packages, or build the package with imageConfig.compression gz", archive), nil
}

// isZstdPackage says whether a package file is the zstd tool's own: the
// Debian zstd_VERSION_ARCH.deb or the rpm zstd-VERSION.ARCH.rpm (not
// libzstd, which carries no command).
func isZstdPackage(name string) bool {
	return strings.HasPrefix(name, "zstd_") && strings.HasSuffix(name, ".deb") ||
		strings.HasPrefix(name, "zstd-") && strings.HasSuffix(name, ".rpm")
}
