package cluster

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// What the walks look for on a host comes from the package's index through
// the selection the upload phases make (phase.CommonEntries and
// phase.RouteEntries), never from a list of the test package's files, so
// the assertions hold for any package (docs/e2e.md, "Your own package").

// commonPlacements are the files Upload files to hosts puts on h.
func commonPlacements(s *node.Fleet, h *node.Host) []node.Placement {
	var out []node.Placement
	for _, e := range phase.CommonEntries(s.Package.Entries(), h) {
		target := e.Target
		if e.Kind == pkgfile.KindImages {
			target = s.ImagesDir()
		}
		out = append(out, s.EntryPlacement(e, target))
	}
	return out
}

// routePlacements are the files route's upload phase puts on h when it
// claims it; only the binary route stages executables.
func routePlacements(s *node.Fleet, h *node.Host, route string) []node.Placement {
	var out []node.Placement
	for _, e := range phase.RouteEntries(s.Package.Entries(), route, h) {
		pl := s.EntryPlacement(e, e.Target)
		pl.Staged = pl.Staged && route == v1alpha1.RouteBinary
		out = append(out, pl)
	}
	return out
}

// expectedRoute is the route that claims h (docs/apply.md, Install
// routes): RPM or APT when it is the host's family's and the package has
// files of it for the host, else the binary route when it has some, else
// none.
func expectedRoute(s *node.Fleet, h *node.Host) string {
	for _, r := range []string{v1alpha1.RouteRPM, v1alpha1.RouteAPT} {
		if h.OS.Route() == r && len(routePlacements(s, h, r)) > 0 {
			return r
		}
	}
	if len(routePlacements(s, h, v1alpha1.RouteBinary)) > 0 {
		return v1alpha1.RouteBinary
	}
	return ""
}

// assertPlaced checks from inside the host that at holds pl's bytes with
// its mode and owner (root when the package names none).
func assertPlaced(t *testing.T, in *inspector, host string, pl node.Placement, at string) {
	t.Helper()
	owner := pl.Owner
	if owner == "" {
		owner = "root:root"
	}
	got, ok := in.try(t, host, "stat -c '%a %U:%G' "+at+" | tr '\\n' ' '; sha256sum "+at+" | cut -d' ' -f1")
	assert.True(t, ok, "%s: %s (%s) is missing", host, at, pl.Name)
	assert.Equal(t, fmt.Sprintf("%o %s %s", pl.Mode.Perm(), owner, pl.SHA256), got, "%s: %s (%s)", host, at, pl.Name)
}

// shipsUnit says placements include the engine unit's file.
func shipsUnit(pls []node.Placement, unit string) bool {
	for _, pl := range pls {
		if path.Base(pl.Target) == unit+".service" {
			return true
		}
	}
	return false
}

// packageInstalledCmd is a shell command that succeeds when the package in
// the uploaded file is installed, asked of the package manager of the
// host's family as detected from its os-release: rpm on Enterprise Linux
// (and the other RPM families), dpkg on Debian and Ubuntu. A family with
// no package route has no such command: its hosts take the binary route.
func packageInstalledCmd(o hostos.OS, file string) (string, error) {
	switch o.Route() {
	case v1alpha1.RouteRPM:
		return `rpm -q "$(rpm -qp --qf '%{NAME}' ` + file + `)"`, nil
	case v1alpha1.RouteAPT:
		return `[ "$(dpkg-query -W -f='${Status}' "$(dpkg-deb -f ` + file + ` Package)")" = "install ok installed" ]`, nil
	}
	return "", fmt.Errorf("%s (%s) has no package route: a package file is never installed there", o.Release.ID, o.Family)
}

// routeNote is what a route phase's assertions say of a host: its route.
func routeNote(h *node.Host, want string) string {
	return strings.TrimSpace(fmt.Sprintf("%s: route %q, want %q", h.Spec.Hostname, h.Route, want))
}
