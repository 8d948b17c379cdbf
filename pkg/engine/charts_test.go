package engine

import (
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// chartValues renders c2 and returns the valuesContent of a chart's
// HelmChartConfig.
func chartValues(t *testing.T, f fixture, chart string) string {
	t.Helper()
	r, err := f.engine.Render(f.input(t, "c2", "c1", true))
	require.NoError(t, err)
	file, ok := r.File(f.engine.Paths().ManifestsDir + "/" + chart + "-config.yaml")
	require.True(t, ok, "no HelmChartConfig for %s", chart)
	var doc struct {
		Spec struct {
			ValuesContent string `yaml:"valuesContent"`
		} `yaml:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(file.Content, &doc))
	return doc.Spec.ValuesContent
}

func TestChartValuesNameTheClustersAddresses(t *testing.T) {
	for _, e := range rancherEngines {
		t.Run(e, func(t *testing.T) {
			f := loadFixture(t, e, "cluster-ha.yaml")
			f.cluster.Spec.Config.Loadbalancer = "api.example.com"
			f.cluster.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.5/24"}
			f.distro.Spec.Config.Engine.Manifest = map[string]any{
				"rke2-cilium": "k8sServiceHost: \"{{ .VIP }}\"\nk8sServicePort: \"{{ .APIPort }}\"\napi: {{ .APIAddress }}\n",
				"traefik": map[string]any{
					"env":   []any{map[string]any{"name": "API", "value": "https://{{ .APIAddress }}:{{ .APIPort }}"}},
					"host":  "{{ .VIP }}",
					"other": 3,
				},
			}
			assert.Equal(t, "k8sServiceHost: \"10.0.0.5\"\nk8sServicePort: \"6443\"\napi: api.example.com\n", chartValues(t, f, "rke2-cilium"))

			var traefik map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(chartValues(t, f, "traefik")), &traefik))
			assert.Equal(t, "10.0.0.5", traefik["host"])
			assert.Equal(t, []any{map[string]any{"name": "API", "value": "https://api.example.com:6443"}}, traefik["env"])
			assert.EqualValues(t, 3, traefik["other"])
			assert.Equal(t, "{{ .VIP }}", f.distro.Spec.Config.Engine.Manifest["traefik"].(map[string]any)["host"],
				"the definition every host shares keeps its template")
		})
	}
}

func TestChartValuesWithoutAVIP(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineRKE2, "cluster-ha.yaml")
	f.distro.Spec.Config.Engine.Manifest = map[string]any{
		"rke2-cilium": `k8sServiceHost: "{{ if .VIP }}{{ .VIP }}{{ else }}localhost{{ end }}"` + "\nlb: {{ .APIAddress }}\n",
	}
	assert.Equal(t, "k8sServiceHost: \"localhost\"\nlb: 10.0.0.10\n", chartValues(t, f, "rke2-cilium"))
}

func TestChartValuesWithoutATemplateAreKeptByteForByte(t *testing.T) {
	f := loadFixture(t, v1alpha1.EngineK3s, "cluster-ha.yaml")
	f.cluster.Spec.Config.VIP = &v1alpha1.VIP{Address: "10.0.0.5"}
	// Comments, odd spacing and flow style would not survive a YAML round
	// trip: text is never re-marshalled, with or without a VIP.
	text := "# keep me\nhost:   '{ .VIP }'   \nlist: [a,  b]\n\n"
	f.distro.Spec.Config.Engine.Manifest = map[string]any{"traefik": text}
	assert.Equal(t, text, chartValues(t, f, "traefik"))
}

func TestChartValuesTemplateErrorsNameTheChart(t *testing.T) {
	data := map[string]any{"VIP": "10.0.0.5", "APIAddress": "10.0.0.5", "APIPort": 6443}
	cases := map[string]any{
		"missing key":   "host: {{ .Nope }}\n",
		"parse error":   "host: {{ .VIP \n",
		"in a mapping":  map[string]any{"a": []any{"{{ .Loadbalancer }}"}},
		"not a mapping": "{{ .VIP }}\n",
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := chartConfigs("/m", map[string]any{"rke2-cilium": values}, data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `chart values "rke2-cilium"`)
		})
	}
	_, err := chartConfigs("/m", map[string]any{"rke2-cilium": "host: {{ .Nope }}\n"}, data)
	require.ErrorContains(t, err, `map has no entry for key "Nope"`)
	_, err = chartConfigs("/m", map[string]any{"rke2-cilium": "{{ .VIP }}\n"}, data)
	assert.ErrorContains(t, err, "as rendered: the values must be a YAML mapping")
}
