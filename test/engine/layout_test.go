package testengine_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	testengine "github.com/colonel-byte/cargoship/test/engine"
)

// Every unit starts the binary where Layout puts it, with the command
// of its role, and reads the environment file the real install writes.
func TestUnitsStartTheBinaryWhereLayoutPutsIt(t *testing.T) {
	for engine, units := range map[string]map[string]string{
		"k3s":  {"k3s/k3s.service": "server", "k3s/k3s-agent.service": "agent"},
		"rke2": {"rke2/rke2-server.service": "server", "rke2/rke2-agent.service": "agent"},
	} {
		layout, err := testengine.Layout(engine)
		require.NoError(t, err)
		var binary string
		for _, f := range layout {
			if f.Source == testengine.SourceBinary {
				binary = f.Target
			}
		}
		for src, role := range units {
			unit, err := testengine.Unit(src)
			require.NoError(t, err, src)
			flat := strings.ReplaceAll(string(unit), "\\\n", " ")
			assert.Regexp(t, `(?m)^ExecStart=`+binary+`\s+`+role+`\s*$`, flat, src)
			assert.Contains(t, string(unit), "Type=notify", src)
			name := strings.TrimSuffix(filepath.Base(src), ".service")
			if engine == "k3s" {
				assert.Contains(t, string(unit), "EnvironmentFile=-/etc/systemd/system/"+name+".service.env", src)
			} else {
				assert.Contains(t, string(unit), "EnvironmentFile=-/usr/local/lib/systemd/system/%N.env", src)
			}
		}
	}
	_, err := testengine.Layout("kubeadm")
	assert.Error(t, err)
}

// RKE2Tarball has the release tarball's layout
// (docs/reference/engines.md 1.2).
func TestRKE2TarballHasTheReleaseLayout(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rke2")
	require.NoError(t, os.WriteFile(bin, []byte("binary"), 0o755))
	var buf bytes.Buffer
	require.NoError(t, testengine.RKE2Tarball(&buf, bin))
	gz, err := gzip.NewReader(&buf)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		if h.Name == "bin/rke2" {
			assert.Equal(t, int64(0o755), h.Mode)
		}
	}
	sort.Strings(names)
	assert.Equal(t, []string{
		"bin/rke2", "bin/rke2-killall.sh", "bin/rke2-uninstall.sh",
		"lib/systemd/system/rke2-agent.env", "lib/systemd/system/rke2-agent.service",
		"lib/systemd/system/rke2-server.env", "lib/systemd/system/rke2-server.service",
	}, names)
}
