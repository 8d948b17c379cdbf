// Command terraform-provider-cargoship is cargoship's OpenTofu/Terraform
// provider (docs/provider.md). OpenTofu and Terraform start it; run by
// hand with -debug it prints the TF_REATTACH_PROVIDERS line to debug with.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/colonel-byte/cargoship/internal/provider"
	"github.com/colonel-byte/cargoship/pkg/version"
)

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version.String()), providerserver.ServeOpts{
		Address:         provider.Address,
		Debug:           *debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}
