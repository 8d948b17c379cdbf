// Package version carries the build's version, set at link time with
// -ldflags "-X github.com/colonel-byte/cargoship/pkg/version.Version=v1.2.3".
package version

import "runtime/debug"

// Version is the release this binary was built from.
var Version = ""

// String returns the version, falling back to the module version Go
// recorded, then to "dev".
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
