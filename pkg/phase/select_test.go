package phase

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

func hostFor(role, family, arch string) *node.Host {
	return &node.Host{Spec: &v1alpha1.Host{Role: role}, Facts: node.Facts{Family: family, Arch: arch}}
}

func osEntry(route, profile, osFamily, arch string) pkgfile.Entry {
	return pkgfile.Entry{Kind: pkgfile.KindOS, Architecture: arch,
		Selector: &v1alpha1.Selector{Package: route, Profile: profile, OS: osFamily}}
}

// A package that ships no debs must leave Debian hosts to the binary route
// (docs/apply.md, Install routes; the APT phase once claimed them with
// nothing to install).
func TestRouteEntriesNoDebsLeavesDebianToBinary(t *testing.T) {
	entries := []pkgfile.Entry{
		osEntry(v1alpha1.RouteRPM, "", v1alpha1.FamilyEnterpriseLinux, ""),
		osEntry(v1alpha1.RouteBinary, "", "", ""),
		osEntry(v1alpha1.RouteBinary, v1alpha1.RoleController, "", ""),
	}
	deb := hostFor(v1alpha1.RoleWorker, v1alpha1.FamilyDebian, "amd64")
	assert.Empty(t, routeEntries(entries, v1alpha1.RouteAPT, deb), "no debs: the APT route has nothing for a Debian host")
	assert.Len(t, routeEntries(entries, v1alpha1.RouteBinary, deb), 1, "the worker gets the binary but not the controller-only file")
	ctl := hostFor(v1alpha1.RoleController, v1alpha1.FamilyEnterpriseLinux, "amd64")
	assert.Len(t, routeEntries(entries, v1alpha1.RouteRPM, ctl), 1)
	assert.Len(t, routeEntries(entries, v1alpha1.RouteBinary, ctl), 2)
}

func TestSelectsArchitectureAndFamily(t *testing.T) {
	arm := hostFor(v1alpha1.RoleWorker, v1alpha1.FamilyDebian, "arm64")
	assert.False(t, selects(nil, "amd64", arm))
	assert.True(t, selects(nil, "arm64", arm))
	assert.False(t, selects(&v1alpha1.Selector{OS: v1alpha1.FamilyEnterpriseLinux}, "", arm))
	assert.False(t, selects(&v1alpha1.Selector{Profile: v1alpha1.RoleController}, "", arm))
	both := hostFor(v1alpha1.RoleControllerAndWorker, v1alpha1.FamilyDebian, "amd64")
	assert.True(t, selects(&v1alpha1.Selector{Profile: v1alpha1.RoleController}, "", both))
}

func TestCommonEntriesPicksOwnImageArchive(t *testing.T) {
	entries := []pkgfile.Entry{
		{Kind: pkgfile.KindFiles, Name: "files/0/a"},
		{Kind: pkgfile.KindImages, Name: "images/images-amd64.tar.zst", Architecture: "amd64"},
		{Kind: pkgfile.KindImages, Name: "images/images-arm64.tar.zst", Architecture: "arm64"},
		{Kind: pkgfile.KindOS, Name: "os/0/k3s"},
	}
	got := commonEntries(entries, hostFor(v1alpha1.RoleWorker, v1alpha1.FamilyDebian, "arm64"))
	names := []string{}
	for _, e := range got {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"files/0/a", "images/images-arm64.tar.zst"}, names)
}
