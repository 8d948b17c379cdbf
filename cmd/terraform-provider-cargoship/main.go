// Command terraform-provider-cargoship is cargoship's OpenTofu/Terraform
// provider (docs/provider.md). OpenTofu and Terraform start it; run by
// hand with -debug it prints the TF_REATTACH_PROVIDERS line to debug with;
// -version prints what `cargoship version` prints, and -version -json its
// JSON, so a release's two binaries can be checked alike.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/colonel-byte/cargoship/internal/provider"
	"github.com/colonel-byte/cargoship/pkg/version"
)

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	showVersion := flag.Bool("version", false, "print the version, commit, build date, Go version and platform, then exit")
	asJSON := flag.Bool("json", false, "with -version: print it as JSON")
	flag.Parse()
	if *showVersion {
		printVersion(*asJSON)
		return
	}
	err := providerserver.Serve(context.Background(), provider.New(version.String()), providerserver.ServeOpts{
		Address:         provider.Address,
		Debug:           *debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}

func printVersion(asJSON bool) {
	in := version.Get()
	if !asJSON {
		fmt.Print(in.Text())
		return
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(in); err != nil {
		log.Fatal(err)
	}
}
