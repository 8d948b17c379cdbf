package hostos

import (
	"regexp"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// OS is a detected operating system: its os-release and the family that
// decides how cargoship prepares it.
type OS struct {
	Release Release
	Family  string
	// Immutable marks an image-based host (Fedora CoreOS and other
	// rpm-ostree variants) whose rpm database is read-only: it is detected
	// as FamilyOther and takes the binary route.
	Immutable bool
}

// familyByID maps os-release IDs to families. docs/reference/hosts.md §1.3:
// "rhel" in ID_LIKE is not an EL test (RHEL 8/9, Oracle and AL2023 say
// "fedora"), so the known IDs come first and ID_LIKE is only a fallback.
var familyByID = map[string]string{
	"rhel": v1alpha1.FamilyEnterpriseLinux, "centos": v1alpha1.FamilyEnterpriseLinux,
	"rocky": v1alpha1.FamilyEnterpriseLinux, "almalinux": v1alpha1.FamilyEnterpriseLinux,
	"ol": v1alpha1.FamilyEnterpriseLinux, "fedora": v1alpha1.FamilyEnterpriseLinux,
	"amzn": v1alpha1.FamilyEnterpriseLinux,

	"debian": v1alpha1.FamilyDebian, "ubuntu": v1alpha1.FamilyDebian,

	"sles": v1alpha1.FamilySUSE, "sled": v1alpha1.FamilySUSE, "suse": v1alpha1.FamilySUSE,
	"opensuse": v1alpha1.FamilySUSE, "opensuse-leap": v1alpha1.FamilySUSE,
	"opensuse-tumbleweed": v1alpha1.FamilySUSE,

	"alpine": v1alpha1.FamilyAlpine,

	// Named so that an ID_LIKE=coreos or arch derivative stops here
	// instead of matching something further down its list.
	"flatcar": v1alpha1.FamilyOther, "coreos": v1alpha1.FamilyOther,
	"arch": v1alpha1.FamilyOther, "rhcos": v1alpha1.FamilyOther,
}

// ostreeVariants are VARIANT_IDs of Fedora's image-based editions, where
// rpm and dnf are read-only (docs/reference/hosts.md §1.3 item 12).
var ostreeVariants = []string{"coreos", "iot", "silverblue", "kinoite", "sericea", "onyx"}

var elPlatform = regexp.MustCompile(`^platform:el[0-9]+$`)

// Detect picks the family: by ID, then by PLATFORM_ID platform:elN, then by
// each ID_LIKE word in order (membership, not the first word: Tumbleweed
// lists "opensuse suse", Leap "suse opensuse"). Anything unknown is
// FamilyOther, the binary route.
func Detect(rel Release) OS {
	o := OS{Release: rel, Family: v1alpha1.FamilyOther}
	if rel.ID == "fedora" && (slices.Contains(ostreeVariants, rel.Fields["VARIANT_ID"]) || strings.Contains(rel.PrettyName, "CoreOS")) {
		o.Immutable = true
		return o
	}
	if f, ok := familyByID[rel.ID]; ok {
		o.Family = f
		return o
	}
	if elPlatform.MatchString(rel.Fields["PLATFORM_ID"]) {
		o.Family = v1alpha1.FamilyEnterpriseLinux
		return o
	}
	for _, like := range rel.IDLike {
		if f, ok := familyByID[like]; ok {
			o.Family = f
			return o
		}
	}
	return o
}

// Route is the install route (selector.package) files for this host take.
// SUSE takes the binary route: see the package documentation.
func (o OS) Route() string {
	switch o.Family {
	case v1alpha1.FamilyEnterpriseLinux:
		return v1alpha1.RouteRPM
	case v1alpha1.FamilyDebian:
		return v1alpha1.RouteAPT
	}
	return v1alpha1.RouteBinary
}

// Version is VERSION_ID; empty on rolling releases (Arch, Debian sid).
func (o OS) Version() string { return o.Release.VersionID }

// Major is the part of VERSION_ID before the first dot: "9" for "9.6",
// "2023" for Amazon Linux 2023, "3" for Alpine "3.23.2".
func (o OS) Major() string {
	major, _, _ := strings.Cut(o.Release.VersionID, ".")
	return major
}

// String names the OS in reports: PRETTY_NAME and the family.
func (o OS) String() string { return o.Release.PrettyName + " (" + o.Family + ")" }
