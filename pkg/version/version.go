// Package version says what build this binary is. A release sets Version,
// Commit and Date at link time:
//
//	-ldflags "-X github.com/colonel-byte/cargoship/pkg/version.Version=v1.2.3
//	          -X github.com/colonel-byte/cargoship/pkg/version.Commit=<sha>
//	          -X github.com/colonel-byte/cargoship/pkg/version.Date=<RFC 3339>"
//
// A plain go build leaves them empty, and the VCS stamp Go writes into every
// binary built in a checkout (vcs.revision, vcs.time, vcs.modified) fills
// them in instead, so even a developer's binary names its commit.
package version

import (
	"runtime"
	"runtime/debug"
)

// Set by -ldflags -X in a release build; empty otherwise.
var (
	// Version is the release this binary was built as.
	Version = ""
	// Commit is the full git revision it was built from.
	Commit = ""
	// Date is when it was built (a release) or committed (VCS stamp), RFC 3339.
	Date = ""
)

// Dev is the version of a build that is no release and no module version.
const Dev = "dev"

// Info is everything `cargoship version` prints.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	// Modified is the VCS stamp's vcs.modified: the checkout had changes
	// the commit does not hold.
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get is this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(linked{Version, Commit, Date}, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// String is this binary's version alone, as logs, user agents and the
// package's build.toolVersion carry it.
func String() string { return Get().Version }

// linked are the values -ldflags set.
type linked struct{ version, commit, date string }

// resolve prefers what the link set, then what Go recorded; bi may be nil
// (a binary built without module support).
func resolve(ld linked, bi *debug.BuildInfo, goVersion, platform string) Info {
	in := Info{Version: ld.version, Commit: ld.commit, Date: ld.date, GoVersion: goVersion, Platform: platform}
	if bi == nil {
		if in.Version == "" {
			in.Version = Dev
		}
		return in
	}
	if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		// go install module@version records the module's version.
		in.Version = bi.Main.Version
	}
	if in.Version == "" {
		in.Version = Dev
	}
	if bi.GoVersion != "" {
		in.GoVersion = bi.GoVersion
	}
	var stampRev, stampTime string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			stampRev = s.Value
		case "vcs.time":
			stampTime = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	if in.Commit == "" {
		in.Commit = stampRev
	}
	if in.Date == "" {
		in.Date = stampTime
	}
	return in
}
