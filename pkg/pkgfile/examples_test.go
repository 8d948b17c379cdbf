package pkgfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// TestEveryExampleLoadsAndPlans loads every shipped definition as create
// does and names every entry it would carry, for every architecture, so an
// example that create would refuse fails here rather than for a user.
func TestEveryExampleLoadsAndPlans(t *testing.T) {
	var defs []string
	err := filepath.WalkDir("../../example", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == v1alpha1.DistroFileName {
			defs = append(defs, p)
		}
		return err
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(defs), 4, "the k3s, rke2, rke2 multi-CNI and upstream examples")
	for _, def := range append(defs, filepath.Join(demoDir, v1alpha1.DistroFileName)) {
		t.Run(def, func(t *testing.T) {
			head, err := os.ReadFile(def)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(head), "# yaml-language-server: $schema="), "editor schema header")

			d, findings, err := v1alpha1.LoadDistroFile(def)
			require.NoError(t, err)
			assert.Empty(t, findings.Warnings())
			arches, err := resolveArches(d, nil)
			require.NoError(t, err)
			planned, err := plan(d, arches)
			require.NoError(t, err)
			require.NotEmpty(t, planned)
			for _, pe := range planned {
				require.NoError(t, checkEntryName(pe.Name))
				if pe.Source != "" && !strings.Contains(pe.Source, "://") {
					_, err := os.Stat(filepath.Join(filepath.Dir(def), pe.Source))
					assert.NoError(t, err, "%s: local source", pe.field)
				}
			}
		})
	}
}
