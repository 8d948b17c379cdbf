// Command cargoship puts Kubernetes onto fleets that cannot reach the
// internet. All of it lives in pkg/; this file only runs the command tree.
package main

import (
	"os"

	"github.com/colonel-byte/cargoship/pkg/cli"
)

func main() {
	os.Exit(cli.Main())
}
