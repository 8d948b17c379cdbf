package engine

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrNotInstalled is what ParseVersion returns for the empty output
// VersionCommand gives on a host without the engine.
var ErrNotInstalled = errors.New("the engine is not installed")

// Version is an engine version: Kubernetes' major.minor.patch, an
// optional prerelease (rc1), and the engine's build metadata (k3s1,
// rke2r10) whose number orders re-releases of one Kubernetes patch.
type Version struct {
	Major, Minor, Patch int
	// Pre is the prerelease without its dash: "rc1", or "".
	Pre string
	// Build is the build metadata without its plus: "k3s1", "rke2r10",
	// "k3s-c88e217f" (a dev build), or "" (kubeadm).
	Build string
	// Engine is "k3s" or "rke2" when Build names one, else "".
	Engine string
	// Rev is the number after k3s / rke2r in Build; 0 when there is none.
	Rev int
}

var (
	versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)((?:[-+][0-9A-Za-z.]+)*)$`)
	preRE     = regexp.MustCompile(`^(rc|alpha|beta)\.?\d*$`)
	k3sRevRE  = regexp.MustCompile(`^k3s\.?(\d+)$`)
	rke2RevRE = regexp.MustCompile(`^rke2r(\d+)$`)
)

// ParseVersion reads a version from what the engines print
// (docs/reference/engines.md 2) or from a distro's spec.version:
//
//	k3s version v1.32.3+k3s1 (079ffa8d)          (k3s --version)
//	rke2 version v1.34.3+rke2r3 (7598946e…)      (rke2 --version)
//	v1.33.3                                      (kubeadm version -o short)
//	Kubernetes v1.33.3                           (kubelet --version)
//	kubeadm version: &version.Info{… GitVersion:"v1.33.3" …}
//	1.35.3-k3s1, v1.35.3+k3s1, 1.35.4-rke2r1     (spec.version, image tags)
//
// The first word that is a version wins; the go version line never is.
// Empty output is ErrNotInstalled.
func ParseVersion(output string) (Version, error) {
	if strings.TrimSpace(output) == "" {
		return Version{}, ErrNotInstalled
	}
	words := strings.FieldsFunc(output, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '"' || r == ',' ||
			r == '(' || r == ')' || r == '{' || r == '}'
	})
	for _, w := range words {
		if v, ok := parseWord(w); ok {
			return v, nil
		}
	}
	return Version{}, fmt.Errorf("no version in %q", firstLine(output))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func parseWord(w string) (Version, bool) {
	m := versionRE.FindStringSubmatch(w)
	if m == nil {
		return Version{}, false
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	// The suffix is split on both separators: spec.version and image tags
	// write the build with a dash (1.35.3-k3s1), so a part is told apart
	// by what it is, not by the separator before it.
	parts := strings.FieldsFunc(m[4], func(r rune) bool { return r == '-' || r == '+' })
	var build []string
	for _, p := range parts {
		switch {
		case v.Pre == "" && len(build) == 0 && preRE.MatchString(p):
			v.Pre = p
		default:
			build = append(build, p)
		}
	}
	v.Build = strings.Join(build, "-")
	if len(build) > 0 {
		if r := k3sRevRE.FindStringSubmatch(build[0]); r != nil && len(build) == 1 {
			v.Engine, v.Rev = "k3s", atoi(r[1])
		} else if r := rke2RevRE.FindStringSubmatch(build[0]); r != nil && len(build) == 1 {
			v.Engine, v.Rev = "rke2", atoi(r[1])
		} else if build[0] == "k3s" {
			v.Engine = "k3s"
		} else if strings.HasPrefix(build[0], "rke2") {
			v.Engine = "rke2"
		}
	}
	return v, true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// String is the version as the engine prints it: v1.35.3+k3s1,
// v1.24.3-rc1+rke2r1, v1.33.3.
func (v Version) String() string {
	s := fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	if v.Build != "" {
		s += "+" + v.Build
	}
	return s
}

// IsZero reports whether v is the zero Version.
func (v Version) IsZero() bool { return v == Version{} }

// Compare orders a and b: -1, 0 or +1. Kubernetes' major.minor.patch
// first, then a prerelease before its release (rc2 before rc10), then the
// engine's revision as a number: +rke2r9 before +rke2r10, which a string
// comparison (the earlier tool's) gets wrong, and which SemVer ignores.
func Compare(a, b Version) int {
	for _, d := range [][2]int{{a.Major, b.Major}, {a.Minor, b.Minor}, {a.Patch, b.Patch}} {
		if c := cmpInt(d[0], d[1]); c != 0 {
			return c
		}
	}
	switch {
	case a.Pre == "" && b.Pre != "":
		return 1
	case a.Pre != "" && b.Pre == "":
		return -1
	}
	if c := cmpNatural(a.Pre, b.Pre); c != 0 {
		return c
	}
	return cmpInt(a.Rev, b.Rev)
}

// Compare is Compare(v, o).
func (v Version) Compare(o Version) int { return Compare(v, o) }

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var naturalRE = regexp.MustCompile(`^(\D*)\.?(\d*)$`)

// cmpNatural compares prereleases by their word, then their number.
func cmpNatural(a, b string) int {
	ma, mb := naturalRE.FindStringSubmatch(a), naturalRE.FindStringSubmatch(b)
	if ma == nil || mb == nil {
		return strings.Compare(a, b)
	}
	if c := strings.Compare(ma[1], mb[1]); c != 0 {
		return c
	}
	return cmpInt(atoi(ma[2]), atoi(mb[2]))
}

// CheckUpgradeStep refuses an upgrade from have to want that skips a minor
// version: the engines and kubeadm move one minor at a time
// (docs/reference/engines.md 7, 7.1). A downgrade is not its business.
func CheckUpgradeStep(have, want Version) error {
	if Compare(have, want) >= 0 {
		return nil
	}
	if want.Major != have.Major || want.Minor > have.Minor+1 {
		return fmt.Errorf("%s to %s skips minor version %d.%d: upgrade one minor version at a time, with a %d.%d package first",
			have, want, have.Major, have.Minor+1, have.Major, have.Minor+1)
	}
	return nil
}
