package engine

import (
	"fmt"
	"path"
	"regexp"
	"sort"

	"github.com/goccy/go-yaml"
)

// addonName is what the engine accepts as a manifest's basename: the file
// becomes an AddOn object named after it (RFC 1123, no '_').
var addonName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// chartConfigs turns engine.manifest (chart name -> values) into one
// HelmChartConfig per chart in the manifests directory. Values written as
// YAML text are kept as written; a mapping is marshalled as YAML (the
// earlier tool printed it with %v, giving "map[a:b]").
func chartConfigs(manifestsDir string, charts map[string]any) ([]File, error) {
	names := make([]string, 0, len(charts))
	for n := range charts {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []File
	for _, name := range names {
		if !addonName.MatchString(name) || len(name) > 63 {
			return nil, fmt.Errorf("chart values %q: the name must be a chart's name (lower-case letters, digits, '-')", name)
		}
		values, err := valuesContent(charts[name])
		if err != nil {
			return nil, fmt.Errorf("chart values %q: %w", name, err)
		}
		doc := map[string]any{
			"apiVersion": "helm.cattle.io/v1",
			"kind":       "HelmChartConfig",
			"metadata":   map[string]any{"name": name, "namespace": "kube-system"},
			"spec":       map[string]any{"valuesContent": values},
		}
		b, err := marshalYAML(doc)
		if err != nil {
			return nil, fmt.Errorf("chart values %q: %w", name, err)
		}
		files = append(files, File{
			Path:    path.Join(manifestsDir, name+"-config.yaml"),
			Content: b,
			Mode:    modePrivate,
		})
	}
	return files, nil
}

// valuesContent is a chart's values as the YAML text HelmChartConfig
// carries. Text must parse as YAML, so a typo fails here and not in a
// helm job on the cluster.
func valuesContent(v any) (string, error) {
	switch t := v.(type) {
	case string:
		var probe any
		if err := yaml.Unmarshal([]byte(t), &probe); err != nil {
			return "", fmt.Errorf("the values are not YAML: %w", err)
		}
		if _, ok := probe.(map[string]any); !ok && probe != nil {
			return "", fmt.Errorf("the values must be a YAML mapping")
		}
		return t, nil
	case map[string]any:
		b, err := marshalYAML(t)
		return string(b), err
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("the values must be YAML text or a mapping, not %T", v)
}
