package v1alpha1

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// LoadClusterFile reads, decodes and validates an inventory. The error is a
// *DocumentError carrying every problem; findings also holds warnings.
func LoadClusterFile(path string) (*Cluster, Findings, error) {
	data, err := readDocument(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseCluster(path, data)
}

// ParseCluster is LoadClusterFile for bytes already read; file names them.
func ParseCluster(file string, data []byte) (*Cluster, Findings, error) {
	return parseCluster(file, data, haRules)
}

func parseCluster(file string, data []byte, rules []haRule) (*Cluster, Findings, error) {
	c := &Cluster{}
	d, ok := decode(file, data, c)
	if ok {
		validateClusterRules(d, c, rules)
		c.SetDefaults()
	}
	return result(c, d)
}

// LoadDistroFile reads, decodes and validates a distro definition.
func LoadDistroFile(path string) (*Distro, Findings, error) {
	data, err := readDocument(path)
	if err != nil {
		return nil, nil, err
	}
	return ParseDistro(path, data)
}

// ParseDistro is LoadDistroFile for bytes already read.
func ParseDistro(file string, data []byte) (*Distro, Findings, error) {
	ds := &Distro{}
	d, ok := decode(file, data, ds)
	if ok {
		validateDistro(d, ds)
		ds.SetDefaults()
		ds.src = &document{file: d.file, body: d.body, pos: d.pos}
	}
	return result(ds, d)
}

func result[T any](v *T, d *document) (*T, Findings, error) {
	slices.SortStableFunc(d.findings, func(a, b Finding) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	if d.findings.HasErrors() {
		return nil, d.findings, &DocumentError{File: d.file, Findings: d.findings}
	}
	return v, d.findings, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// DistroFileName is the definition file a create directory holds.
const DistroFileName = "distro.yaml"

// DistroPath resolves a definition argument: a directory means the
// distro.yaml inside it.
func DistroPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, DistroFileName)
	}
	return p
}
