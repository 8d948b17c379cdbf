package v1alpha1

import (
	"net/netip"
	"testing"
	"time"
)

func TestParseRange(t *testing.T) {
	in := netip.MustParseAddr("10.0.0.100")
	for s, holds := range map[string]bool{
		"10.0.0.0/24": true, "10.0.0.96/30": false, "10.0.0.90-10.0.0.110": true, "10.0.0.100": true,
		"10.0.0.100-10.0.0.100": true, "10.0.0.101-10.0.0.200": false, "fd00::/8": false,
	} {
		r, ok := parseRange(s)
		if !ok {
			t.Errorf("%q is no range", s)
			continue
		}
		if r.contains(in) != holds {
			t.Errorf("%q contains 10.0.0.100: %v, want %v", s, !holds, holds)
		}
	}
	for _, s := range []string{"30000-32767", "10.0.0.9-10.0.0.1", "10.0.0.1-fd00::1", "default", "", "10.0.0.0/33"} {
		if _, ok := parseRange(s); ok {
			t.Errorf("%q read as a pool", s)
		}
	}
}

// TestRenderTemplate: chart values are read as the renderer writes them,
// and a template that fails or would run away is read as written.
func TestRenderTemplate(t *testing.T) {
	c := &Cluster{Spec: ClusterSpec{Config: ClusterConfig{VIP: &VIP{Address: "10.0.0.100/24"}}}}
	data := chartTemplateData(c)
	for in, want := range map[string]string{
		"k8sServiceHost: {{ .VIP }}":                          "k8sServiceHost: 10.0.0.100",
		"{{ if .VIP }}{{ .VIP }}{{ else }}localhost{{ end }}": "10.0.0.100",
		"{{ .APIAddress }}:{{ .APIPort }}":                    "10.0.0.100:6443",
		"{{ .Nothing }}":                                      "{{ .Nothing }}",
		"{{ if }":                                             "{{ if }",
		"plain: text":                                         "plain: text",
		"{{range .APIPort}}{{range .APIPort}}{{range .APIPort}}{{end}}{{end}}{{end}}": "{{range .APIPort}}{{range .APIPort}}{{range .APIPort}}{{end}}{{end}}{{end}}",
	} {
		start := time.Now()
		if got := renderTemplate(in, data); got != want {
			t.Errorf("renderTemplate(%q) = %q, want %q", in, got, want)
		}
		if time.Since(start) > time.Second {
			t.Errorf("renderTemplate(%q) took %s", in, time.Since(start))
		}
	}
	m := renderedValues(map[string]any{"cilium": map[string]any{"hosts": []any{"{{ .VIP }}", 3}}}, data)
	if got := m["cilium"].(map[string]any)["hosts"].([]any)[0]; got != "10.0.0.100" {
		t.Errorf("a mapping's leaves are rendered: got %v", got)
	}
}
