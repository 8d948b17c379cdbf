package phase

import (
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// selects reports whether a file selector picks host h: its role class,
// its OS family and its architecture must all match what is set.
func selects(sel *v1alpha1.Selector, arch string, h *node.Host) bool {
	if arch != "" && arch != h.Facts.Arch {
		return false
	}
	if sel == nil {
		return true
	}
	switch sel.Profile {
	case v1alpha1.RoleController:
		if !h.IsController() {
			return false
		}
	case v1alpha1.RoleWorker:
		if h.IsController() {
			return false
		}
	}
	if sel.OS != "" && sel.OS != h.Facts.Family {
		return false
	}
	if sel.Architecture != "" && sel.Architecture != h.Facts.Arch {
		return false
	}
	return true
}

// routeEntries are the os.files of one install route that host h gets.
func routeEntries(entries []pkgfile.Entry, route string, h *node.Host) []pkgfile.Entry {
	var out []pkgfile.Entry
	for _, e := range entries {
		if e.Kind != pkgfile.KindOS || e.Selector == nil || e.Selector.Package != route {
			continue
		}
		if selects(e.Selector, e.Architecture, h) {
			out = append(out, e)
		}
	}
	return out
}

// commonEntries are the distro-agnostic files host h gets: spec.config.files
// and the image archive for its architecture.
func commonEntries(entries []pkgfile.Entry, h *node.Host) []pkgfile.Entry {
	var out []pkgfile.Entry
	for _, e := range entries {
		switch e.Kind {
		case pkgfile.KindFiles:
			if selects(e.Selector, e.Architecture, h) {
				out = append(out, e)
			}
		case pkgfile.KindImages:
			if e.Architecture == h.Facts.Arch {
				out = append(out, e)
			}
		}
	}
	return out
}
