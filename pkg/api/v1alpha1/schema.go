package v1alpha1

//go:generate go run ../../../hack/genschema -src . -out ../../../schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/invopop/jsonschema"
)

// schemaBaseURL is where the generated schemas are published; editors find
// them through a `# yaml-language-server: $schema=` comment.
const schemaBaseURL = "https://raw.githubusercontent.com/colonel-byte/cargoship/main/schema/"

// SchemaDocuments names each generated schema file and the document it
// describes, in the order they are documented.
var SchemaDocuments = []struct {
	File  string
	Title string
	Value any
}{
	{"cluster.schema.json", "cargoship cluster inventory (kind Cluster, or the earlier ZarfCluster)", &Cluster{}},
	{"distro.schema.json", "cargoship distro definition (kind ZarfDistro)", &Distro{}},
	{"settings.schema.json", "cargoship tool settings (cargoship-config.yaml)", &Settings{}},
}

// Schemas returns the JSON schema (draft 2020-12) of every document, keyed
// by file name. srcDir is this package's source directory: descriptions
// come from its doc comments. Every object is closed
// (additionalProperties: false) and allows ^x- extension keys, as the
// loaders do.
func Schemas(srcDir string) (map[string][]byte, error) {
	comments, err := schemaComments(srcDir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, doc := range SchemaDocuments {
		r := &jsonschema.Reflector{ExpandedStruct: true, CommentMap: comments}
		s := r.Reflect(doc.Value)
		s.ID = jsonschema.ID(schemaBaseURL + doc.File)
		s.Title = doc.Title
		allowExtensions(s)
		for _, def := range s.Definitions {
			allowExtensions(def)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return nil, fmt.Errorf("%s: %w", doc.File, err)
		}
		out[doc.File] = buf.Bytes()
	}
	return out, nil
}

// schemaComments reads the doc comments of srcDir. The library keys them by
// the import path joined with the directory walked, so they are re-keyed
// to this package's import path whatever directory the caller stands in.
func schemaComments(srcDir string) (map[string]string, error) {
	pkg := "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	r := &jsonschema.Reflector{}
	if err := r.AddGoComments(pkg, filepath.Clean(srcDir)); err != nil {
		return nil, fmt.Errorf("reading doc comments in %s: %w", srcDir, err)
	}
	walked := path.Join(pkg, filepath.ToSlash(filepath.Clean(srcDir)))
	out := map[string]string{}
	for k, v := range r.CommentMap {
		if rest, ok := strings.CutPrefix(k, walked+"."); ok {
			out[pkg+"."+rest] = v
		}
	}
	return out, nil
}

// allowExtensions lets every object with named properties carry x- keys.
func allowExtensions(s *jsonschema.Schema) {
	if s == nil || s.Properties == nil || s.Properties.Len() == 0 {
		return
	}
	s.PatternProperties = map[string]*jsonschema.Schema{"^x-": {}}
}
