package v1alpha1

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

const schemaDir = "../../../schema"

// TestSchemasUpToDate regenerates the schemas in memory and fails when the
// committed files differ: a type or doc comment changed without them.
func TestSchemasUpToDate(t *testing.T) {
	got, err := Schemas(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(SchemaDocuments) {
		t.Fatalf("generated %d schemas, want %d", len(got), len(SchemaDocuments))
	}
	for name, data := range got {
		committed, err := os.ReadFile(filepath.Join(schemaDir, name))
		if err != nil {
			t.Errorf("schema/%s: %v: run go generate ./...", name, err)
			continue
		}
		if !bytes.Equal(committed, data) {
			t.Errorf("schema/%s is stale: run go generate ./...", name)
		}
	}
}

// TestSchemasFromAnyDirectory: the generator runs from the repository root
// (go run ./hack/genschema) and go generate from this directory; both must
// give the same bytes, descriptions included.
func TestSchemasFromAnyDirectory(t *testing.T) {
	here, err := Schemas(".")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	there, err := Schemas(abs)
	if err != nil {
		t.Fatal(err)
	}
	for name := range here {
		if !bytes.Equal(here[name], there[name]) {
			t.Errorf("%s differs when generated from %s", name, abs)
		}
	}
}

func loadSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(schemaDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// TestSchemaShape checks what the brief asks of every schema: draft
// 2020-12, closed objects that allow x- keys, and descriptions from the
// doc comments.
func TestSchemaShape(t *testing.T) {
	for _, doc := range SchemaDocuments {
		s := loadSchema(t, doc.File)
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %v", doc.File, s["$schema"])
		}
		objects := []map[string]any{s}
		defs, _ := s["$defs"].(map[string]any)
		for _, d := range defs {
			objects = append(objects, d.(map[string]any))
		}
		for _, o := range objects {
			if _, named := o["properties"]; !named {
				continue
			}
			if o["additionalProperties"] != false {
				t.Errorf("%s: an object allows unknown keys: %v", doc.File, o["description"])
			}
			pp, _ := o["patternProperties"].(map[string]any)
			if _, ok := pp["^x-"]; !ok {
				t.Errorf("%s: an object does not allow x- keys: %v", doc.File, o["description"])
			}
		}
	}
	cfg := loadSchema(t, "cluster.schema.json")["$defs"].(map[string]any)["ClusterConfig"].(map[string]any)
	lb := cfg["properties"].(map[string]any)["loadbalancer"].(map[string]any)
	if d, _ := lb["description"].(string); !strings.Contains(d, "joining nodes use to reach") {
		t.Errorf("loadbalancer's description %q is not its doc comment", d)
	}
}

// TestSchemaAgreesWithLoader validates corpus documents against the
// committed schemas: every valid document passes, and documents the loader
// refuses for their shape (unknown keys, wrong types, values outside an
// enumeration) fail. Semantic checks (duplicates, addresses) are the
// loader's alone.
func TestSchemaAgreesWithLoader(t *testing.T) {
	schemas := map[string]map[string]any{}
	for kind, file := range map[string]string{"cluster": "cluster.schema.json", "distro": "distro.schema.json", "settings": "settings.schema.json"} {
		schemas[kind] = loadSchema(t, file)
	}
	check := func(kind, file string) []string {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if v == nil {
			v = map[string]any{}
		}
		return validateSchema(schemas[kind], schemas[kind], v, "")
	}
	valid, _ := filepath.Glob("testdata/valid/*/*.yaml")
	for _, f := range valid {
		kind := filepath.Base(filepath.Dir(f))
		if errs := check(kind, f); len(errs) > 0 {
			t.Errorf("%s passes the loader but not the schema:\n  %s", f, strings.Join(errs, "\n  "))
		}
	}
	for _, f := range []string{
		"cluster/01-unknown-fields.yaml", "cluster/20-string-where-a-list-is.yaml", "cluster/23-wrong-kind.yaml",
		"cluster/03-unknown-role.yaml", "cluster/30-earlier-winrm.yaml", "cluster/35-several-wrong-shapes.yaml",
		"distro/01-unknown-fields.yaml", "distro/02-unknown-engine-type.yaml", "distro/06-unknown-route.yaml",
		"distro/07-unknown-selector-os.yaml", "distro/17-string-where-a-list-is.yaml", "distro/21-bad-name-version-compression.yaml",
		"distro/27-version-leaves-output-dir.yaml", "distro/32-perm-special-bits.yaml",
		"settings/01-unknown-keys.yaml", "settings/03-bad-values.yaml", "settings/04-wrong-shapes.yaml",
	} {
		if errs := check(filepath.Dir(f), filepath.Join("testdata/invalid", f)); len(errs) == 0 {
			t.Errorf("invalid/%s fails the loader for its shape, but passes the schema", f)
		}
	}
}
