package main

import (
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// target is what decides which package entries a host gets: the bench's
// hosts are Debian, amd64, on the binary route.
type target struct {
	route, family, arch string
	controller          bool
}

// benchTarget is a fleet host of this benchmark.
func benchTarget(controller bool) target {
	return target{route: v1alpha1.RouteBinary, family: v1alpha1.FamilyDebian, arch: "amd64", controller: controller}
}

// payloadBytes sums the package entries the stage walk uploads to a host
// like t: the common files and image archive (pkg/phase commonEntries) and
// its route's OS files (routeEntries), chosen as pkg/phase's selects does.
// The raw transfer sends this many bytes to each host, and egress is
// compared with it.
func payloadBytes(entries []pkgfile.Entry, t target) int64 {
	var n int64
	for _, e := range entries {
		var take bool
		switch e.Kind {
		case pkgfile.KindFiles:
			take = t.selects(e.Selector, e.Architecture)
		case pkgfile.KindImages:
			take = e.Architecture == t.arch
		case pkgfile.KindOS:
			take = e.Selector != nil && e.Selector.Package == t.route && t.selects(e.Selector, e.Architecture)
		}
		if take {
			n += e.Size
		}
	}
	return n
}

// selects mirrors pkg/phase's selects for a host like t.
func (t target) selects(sel *v1alpha1.Selector, arch string) bool {
	if arch != "" && arch != t.arch {
		return false
	}
	if sel == nil {
		return true
	}
	switch sel.Profile {
	case v1alpha1.RoleController:
		if !t.controller {
			return false
		}
	case v1alpha1.RoleWorker:
		if t.controller {
			return false
		}
	}
	return (sel.OS == "" || sel.OS == t.family) && (sel.Architecture == "" || sel.Architecture == t.arch)
}
