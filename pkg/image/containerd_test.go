package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// containerd is a real containerd daemon with its own root, state and
// socket, for the life of one test.
type containerd struct {
	sock string
}

// startContainerd runs containerd (Debian package "containerd") as the
// importer k3s, rke2 and `ctr images import` all use.
func startContainerd(t *testing.T) *containerd {
	t.Helper()
	for _, bin := range []string{"containerd", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (apt-get install containerd); the import check needs a real containerd", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("containerd needs root")
	}
	// Short path: unix socket names are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "ctrd")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	c := &containerd{sock: filepath.Join(dir, "c.sock")}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.sock)
	cfgPath := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(config), 0o600))

	var logs bytes.Buffer
	cmd := exec.Command("containerd", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := c.ctr(t.Context(), nil, "version"); err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not start:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ctr runs ctr against this daemon in the k8s.io namespace, where the
// engines import.
func (c *containerd) ctr(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.sock, "--namespace", "k8s.io"}, args...)...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// decompressed returns a reader of the plain tar inside an archive, as an
// engine's importer sees it after choosing a decompressor by extension.
func decompressed(t *testing.T, archive []byte, compression string) io.Reader {
	t.Helper()
	switch compression {
	case "gz":
		zr, err := gzip.NewReader(bytes.NewReader(archive))
		require.NoError(t, err)
		return zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(archive))
		require.NoError(t, err)
		t.Cleanup(zr.Close)
		return zr.IOReadCloser()
	}
	return bytes.NewReader(archive)
}

// The archive is what containerd imports: every image arrives under its
// normalised name with all of its content, and its layers unpack.
func TestArchiveImportsIntoContainerd(t *testing.T) {
	c := startContainerd(t)
	fx := newFixture(t)
	refs := []string{fx.reg.Ref("demo/multi:1.0"), fx.reg.Ref("demo/app-a:1.0"), fx.reg.Ref("demo/app-b:2.0")}
	p := newPuller(t)
	for _, arch := range []string{"amd64", "arm64"} {
		for _, compression := range compressions {
			t.Run(arch+"/"+compression, func(t *testing.T) {
				archive, sum := writeTo(t, p, refs, arch, compression)
				_, err := c.ctr(t.Context(), decompressed(t, archive, compression),
					"images", "import", "--platform", "linux/"+arch, "--snapshotter", "native", "-")
				require.NoError(t, err)

				listed, err := c.ctr(t.Context(), nil, "images", "ls", "-q")
				require.NoError(t, err)
				for _, img := range sum.Images {
					assert.Contains(t, strings.Fields(listed), img.Ref)
				}
				check, err := c.ctr(t.Context(), nil, "images", "check", "--snapshotter", "native")
				require.NoError(t, err)
				for _, img := range sum.Images {
					blobs := len(img.Layers) + 1
					line := strings.Fields(lineWith(check, img.Ref))
					require.NotEmpty(t, line, "%s is listed by ctr images check:\n%s", img.Ref, check)
					assert.Equal(t, fmt.Sprintf("complete (%d/%d)", blobs, blobs), line[3]+" "+line[4], "all content of %s is present", img.Ref)
					assert.Equal(t, "true", line[len(line)-1], "%s unpacked into the snapshotter", img.Ref)
				}
				ready, err := c.ctr(t.Context(), nil, "images", "check", "--snapshotter", "native", "-q")
				require.NoError(t, err)
				assert.ElementsMatch(t, refsOf(sum.Images), strings.Fields(ready))
				content, err := c.ctr(t.Context(), nil, "content", "ls", "-q")
				require.NoError(t, err)
				for _, img := range sum.Images {
					assert.Contains(t, content, img.ConfigDigest, "the config is stored under the registry's digest")
					for _, l := range img.Layers {
						assert.Contains(t, content, l, "layers are stored under the registry's digests")
					}
				}
				for _, img := range sum.Images {
					_, err := c.ctr(t.Context(), nil, "images", "rm", "--sync", img.Ref)
					require.NoError(t, err)
				}
			})
		}
	}
}

func refsOf(images []ImageSummary) []string {
	var out []string
	for _, img := range images {
		out = append(out, img.Ref)
	}
	return out
}

func lineWith(out, ref string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == ref {
			return l
		}
	}
	return ""
}
