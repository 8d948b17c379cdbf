// Command testengine is the cargoship test engine: a test double for k3s
// and rke2 that tests install in place of the engine binary. Named k3s (or
// built with buildinfo.Engine=k3s) it imitates k3s; named rke2, rke2. See
// docs/test-engine.md.
package main

import (
	"os"

	"github.com/colonel-byte/cargoship/test/engine/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args)) }
