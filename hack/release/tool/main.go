// Command cargoship-release-tool is what .goreleaser.yaml runs where
// goreleaser would otherwise call gpg and syft: it signs a file in
// cargoship's key format and writes a binary's CycloneDX SBOM. hack/release
// builds it and puts it on goreleaser's PATH (docs/release.md).
//
//	cargoship-release-tool sign -key PRIVATE -out SIG FILE
//	cargoship-release-tool sbom -version VERSION -out DOCUMENT BINARY
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/colonel-byte/cargoship/hack/release"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cargoship-release-tool:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want a subcommand: sign or sbom")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	out := fs.String("out", "", "file to write")
	switch args[0] {
	case "sign":
		key := fs.String("key", "", "ed25519 private key (cargoship keygen)")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if *key == "" || *out == "" {
			return fmt.Errorf("sign: give -key and -out")
		}
		return release.SignFile(*key, fs.Arg(0), *out)
	case "sbom":
		version := fs.String("version", "", "the release version")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if *version == "" || *out == "" {
			return fmt.Errorf("sbom: give -version and -out")
		}
		return writeSBOM(*out, fs.Arg(0), *version)
	default:
		return fmt.Errorf("unknown subcommand %q: want sign or sbom", args[0])
	}
}

// parse parses the flags and wants exactly one file argument.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%s: want one file argument, got %d", fs.Name(), fs.NArg())
	}
	return nil
}

func writeSBOM(out, bin, version string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := release.WriteSBOM(f, bin, version); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
