package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// TestRenderRefusesRegistryNamesOutsideCertsD: containerd's hosts.toml
// directories are named after registry names and mirror hosts, so a name
// that is a path is refused here too, not only when the documents load
// (issue 11: 6).
func TestRenderRefusesRegistryNamesOutsideCertsD(t *testing.T) {
	cases := map[string]func(f fixture){
		"cluster registry name": func(f fixture) {
			f.cluster.Spec.Config.Registries = []v1alpha1.Registry{{Name: "../../../../etc/cron.d",
				TLS: &v1alpha1.RegistryTLS{CAFile: "/etc/pki/ca.pem"}}}
		},
		"mirror host": func(f fixture) {
			f.cluster.Spec.Config.Registries = []v1alpha1.Registry{{Name: "docker.io", Mirrors: []string{"https://../../x"},
				TLS: &v1alpha1.RegistryTLS{CAFile: "/etc/pki/ca.pem"}}}
		},
		"distro mirror name": func(f fixture) {
			f.distro.Spec.Config.Engine.Registries = map[string]any{"mirrors": map[string]any{
				"../x": map[string]any{"endpoint": []any{"https://mirror.example.com"}}}}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			f := loadFixture(t, v1alpha1.EngineUpstream, "cluster-ha.yaml")
			in := f.input(t, "w1", "c1", true)
			change(f)
			r, err := f.engine.Render(in)
			var paths []string
			for _, file := range r.Files {
				paths = append(paths, file.Path)
			}
			require.Error(t, err, "rendered %s", strings.Join(paths, " "))
			assert.Contains(t, err.Error(), "is not a registry host")
		})
	}
}
