package engine

import (
	"fmt"
	"path"
	"sort"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

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
		// The name becomes a file name in the manifests directory.
		if err := v1alpha1.CheckChartName(name); err != nil {
			return nil, fmt.Errorf("chart values %q: %w", name, err)
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
// carries, checked as the definition's validation checks them.
func valuesContent(v any) (string, error) {
	if err := v1alpha1.CheckChartValues(v); err != nil {
		return "", err
	}
	switch t := v.(type) {
	case string:
		return t, nil
	case map[string]any:
		b, err := marshalYAML(t)
		return string(b), err
	}
	return "", nil
}
