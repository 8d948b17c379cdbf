package engine

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// chartConfigs turns engine.manifest (chart name -> values) into one
// HelmChartConfig per chart in the manifests directory. Values written as
// YAML text are kept as written; a mapping is marshalled as YAML (the
// earlier tool printed it with %v, giving "map[a:b]"). Either may name the
// cluster's addresses as a template (chartTemplateData).
func chartConfigs(manifestsDir string, charts map[string]any, data map[string]any) ([]File, error) {
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
		values, err := valuesContent(name, charts[name], data)
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

// chartTemplateData is what chart values may name (docs/distro.md, "Chart
// values templates"): a package is built once for many clusters, so a CNI
// that must be told the API's address (Cilium's k8sServiceHost without
// kube-proxy) can only learn it here. VIP is "" without spec.config.vip.
func chartTemplateData(c *v1alpha1.Cluster, apiPort int) map[string]any {
	vip := ""
	if c.Spec.Config.VIP != nil {
		vip = c.Spec.Config.VIP.IP()
	}
	return map[string]any{
		"VIP":        vip,
		"APIAddress": c.Spec.Config.APIAddress(),
		"APIPort":    apiPort,
	}
}

// valuesContent is a chart's values as the YAML text HelmChartConfig
// carries, templated and then checked as the definition's validation checks
// them.
func valuesContent(chart string, v any, data map[string]any) (string, error) {
	switch t := v.(type) {
	case string:
		s, err := expandValues(chart, t, data)
		if err != nil {
			return "", err
		}
		if err := v1alpha1.CheckChartValues(s); err != nil {
			if s != t {
				return "", fmt.Errorf("as rendered: %w", err)
			}
			return "", err
		}
		return s, nil
	case map[string]any:
		// Leaf by leaf, so an address never has to survive YAML quoting.
		m, err := expandMapping(chart, t, data)
		if err != nil {
			return "", err
		}
		b, err := marshalYAML(m)
		return string(b), err
	}
	return "", v1alpha1.CheckChartValues(v)
}

// expandValues renders s as a text/template over data. Text without "{{"
// is returned as it is, byte for byte; a key data lacks is an error, not
// "<no value>" in a chart.
func expandValues(chart, s string, data map[string]any) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	tmpl, err := template.New(chart).Option("missingkey=error").Parse(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// expandMapping templates every string in a decoded values mapping; the
// mapping itself, which every host's render shares, is not changed.
func expandMapping(chart string, m map[string]any, data map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		e, err := expandValue(chart, v, data)
		if err != nil {
			return nil, err
		}
		out[k] = e
	}
	return out, nil
}

func expandValue(chart string, v any, data map[string]any) (any, error) {
	switch t := v.(type) {
	case string:
		return expandValues(chart, t, data)
	case map[string]any:
		return expandMapping(chart, t, data)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			x, err := expandValue(chart, e, data)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return v, nil
}
