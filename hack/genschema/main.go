// Command genschema writes the JSON schemas of cargoship's documents into
// schema/: go run ./hack/genschema (or go generate ./...).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func main() {
	src := flag.String("src", "pkg/api/v1alpha1", "the v1alpha1 package's source directory (doc comments become descriptions)")
	out := flag.String("out", "schema", "directory to write the schemas into")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	files, err := v1alpha1.Schemas(src)
	if err != nil {
		return err
	}
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
