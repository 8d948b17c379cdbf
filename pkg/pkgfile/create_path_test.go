package pkgfile

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// TestPackagePathStaysInOutputDir: a name or version that is a path would
// write, and replace, a file outside -o; create refuses it even when the
// definition did not come through the loader (issue 11: 7).
func TestPackagePathStaysInOutputDir(t *testing.T) {
	out := t.TempDir()
	d := &v1alpha1.Distro{Metadata: v1alpha1.DistroMetadata{Name: "k3s", Version: "1.35.3+k3s1"}}
	d.Spec.Version = "1.35.3+k3s1"
	p, err := packagePath(out, d, []string{"amd64"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(out, "cargoship-k3s-amd64-1.35.3+k3s1.tar.zst"), p)

	for name, change := range map[string]func(*v1alpha1.Distro){
		"version with ..":     func(d *v1alpha1.Distro) { d.Metadata.Version = "../../../var/x" },
		"spec.version a path": func(d *v1alpha1.Distro) { d.Metadata.Version, d.Spec.Version = "", "1/../../x" },
		"name with a slash":   func(d *v1alpha1.Distro) { d.Metadata.Name = "a/../../b" },
		"name a dot":          func(d *v1alpha1.Distro) { d.Metadata.Name = ".hidden" },
	} {
		t.Run(name, func(t *testing.T) {
			bad := *d
			change(&bad)
			p, err := packagePath(out, &bad, []string{"amd64"})
			require.Error(t, err, "gave %s", p)
			assert.Contains(t, err.Error(), "is not a file name part")
		})
	}
}
