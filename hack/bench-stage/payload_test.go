package main

import (
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// TestPayloadBytesSumsWhatAHostGets has an entry of each kind a stage
// walk uploads, and some it does not, each of a size that is a power of
// two: a sum names exactly the entries in it.
func TestPayloadBytesSumsWhatAHostGets(t *testing.T) {
	entries := []pkgfile.Entry{
		{Kind: pkgfile.KindFiles, Size: 1}, // every host
		{Kind: pkgfile.KindFiles, Size: 2, Selector: &v1alpha1.Selector{Profile: v1alpha1.RoleController}},   // controllers
		{Kind: pkgfile.KindFiles, Size: 4, Selector: &v1alpha1.Selector{OS: v1alpha1.FamilyEnterpriseLinux}}, // not Debian
		{Kind: pkgfile.KindFiles, Size: 8, Architecture: "arm64"},                                            // not amd64
		{Kind: pkgfile.KindImages, Size: 16, Architecture: "amd64"},                                          // every amd64 host
		{Kind: pkgfile.KindImages, Size: 32, Architecture: "arm64"},                                          // not amd64
		{Kind: pkgfile.KindOS, Size: 64, Selector: &v1alpha1.Selector{Package: v1alpha1.RouteBinary}},        // the binary route
		{Kind: pkgfile.KindOS, Size: 128, Selector: &v1alpha1.Selector{Package: v1alpha1.RouteAPT}},          // another route
		{Kind: pkgfile.KindOS, Size: 256, Selector: &v1alpha1.Selector{Package: v1alpha1.RouteBinary, Profile: v1alpha1.RoleWorker}},
		{Kind: pkgfile.KindOS, Size: 512},       // no route: none
		{Kind: pkgfile.KindSELinux, Size: 1024}, // not uploaded by the walk's upload phases
	}
	if got, want := payloadBytes(entries, benchTarget(true)), int64(1+2+16+64); got != want {
		t.Errorf("controller: %d, want %d", got, want)
	}
	if got, want := payloadBytes(entries, benchTarget(false)), int64(1+16+64+256); got != want {
		t.Errorf("worker: %d, want %d", got, want)
	}
}
