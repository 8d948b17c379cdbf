package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/cli"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// cargoship runs the CLI's own command tree with args, as a user would.
func cargoship(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand(&out, &errOut, os.LookupEnv)
	root.SetArgs(append(args, "--no-color", "--tmpdir", t.TempDir(), "--cache-dir", t.TempDir()))
	err := root.ExecuteContext(context.Background())
	return out.String() + errOut.String(), err
}

// A k3s definition whose images would go elsewhere than agent/images, the
// only directory k3s imports from, is refused by validate and by create,
// which writes no package (docs/distro.md, spec.config.imageConfig.path);
// the engine's own directory is accepted.
func TestCustomImagesPathRefusedForK3s(t *testing.T) {
	definition := func(path string) string {
		dir := t.TempDir()
		def := "kind: ZarfDistro\nmetadata:\n  name: custom-images\n  version: 0.0.1\n  architectures: [amd64]\n" +
			"spec:\n  type: k3s\n  version: " + e2eutil.K3s.Version + "\n  config:\n    imageConfig:\n      path: " + path + "\n" +
			"    files:\n      - source: motd\n        target: /etc/cargoship-e2e/custom-images\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "distro.yaml"), []byte(def), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "motd"), []byte("x\n"), 0o644))
		return dir
	}

	custom := definition("/opt/cargoship-images")
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{{"validate", "--distro", custom}, {"create", custom, "-o", out}} {
		said, err := cargoship(t, args...)
		require.Error(t, err, "cargoship %s accepted a k3s images path k3s never imports from", args[0])
		msg := err.Error() + "\n" + said
		assert.Contains(t, msg, "imageConfig.path", args[0])
		assert.Contains(t, msg, "/opt/cargoship-images", args[0])
		assert.Contains(t, msg, "/var/lib/rancher/k3s/agent/images", "%s names the path k3s imports from", args[0])
		t.Logf("cargoship %s refused: %s", args[0], firstLines(strings.TrimSpace(msg), 2))
	}
	packages, _ := filepath.Glob(filepath.Join(out, "*.tar.zst"))
	assert.Empty(t, packages, "create wrote no package")

	said, err := cargoship(t, "validate", "--distro", definition("/var/lib/rancher/k3s/agent/images"))
	require.NoError(t, err, "the engine's own directory is fine: %s", said)
}
