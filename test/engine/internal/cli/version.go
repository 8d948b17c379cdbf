package cli

import (
	"fmt"
	"io"
	"path"
	"runtime"

	"github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
)

// printVersion is --version exactly as docs/reference/engines.md 2 gives it:
// the program name as invoked, the version and the commit, then the Go line
// ("k3s version v1.35.3+k3s1 (abcdef12)" / "go version go1.x"). rke2 builds
// set GOEXPERIMENT=boringcrypto, which runtime.Version reports.
func printVersion(w io.Writer, argv0 string, fl flavor.Flavor) {
	_, _ = fmt.Fprintf(w, "%s version %s (%s)\n", path.Base(argv0), buildinfo.Version, commit(fl))
	_, _ = fmt.Fprintf(w, "go version %s\n", runtime.Version())
}

// commit is the stamped commit cut to the engine's length (k3s prints 8
// characters, rke2 all 40).
func commit(fl flavor.Flavor) string {
	c := buildinfo.GitCommit
	if c != "HEAD" && len(c) > fl.CommitLen {
		return c[:fl.CommitLen]
	}
	return c
}
