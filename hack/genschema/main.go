// Command genschema writes the JSON schemas of cargoship's documents, and
// of the report apply, prepare and reset print with -o json, into schema/:
// go run ./hack/genschema (or go generate ./...).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/node"
)

func main() {
	src := flag.String("src", "pkg/api/v1alpha1", "the v1alpha1 package's source directory (doc comments become descriptions)")
	out := flag.String("out", "schema", "directory to write the schemas into")
	reportSrc := flag.String("report-src", "", "the node package's source directory, for the report's descriptions (default: pkg/node beside -src's pkg/api)")
	flag.Parse()
	if *reportSrc == "" {
		// -src is pkg/api/v1alpha1 however it is spelled (go generate
		// passes "."), so pkg/node is two directories up from it.
		abs, err := filepath.Abs(*src)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genschema:", err)
			os.Exit(1)
		}
		*reportSrc = filepath.Join(filepath.Dir(filepath.Dir(abs)), "node")
	}
	if err := run(*src, *reportSrc, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
}

func run(src, reportSrc, out string) error {
	files, err := v1alpha1.Schemas(src)
	if err != nil {
		return err
	}
	report, err := node.ReportSchema(reportSrc)
	if err != nil {
		return err
	}
	files[node.ReportSchemaFile] = report
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(out, name)
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", p)
	}
	return nil
}
