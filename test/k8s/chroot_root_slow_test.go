package k8s

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// flatten extracts an image's flattened filesystem (every layer applied)
// from its tarball into dir.
func flatten(t *testing.T, img Image, dir string) {
	t.Helper()
	tag, err := name.NewTag(img.Ref)
	require.NoError(t, err)
	i, err := tarball.ImageFromPath(img.Tarball, &tag)
	require.NoError(t, err)
	rc := mutate.Extract(i)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(p, os.FileMode(h.Mode)&os.ModePerm))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&os.ModePerm)
			require.NoError(t, err)
			_, err = io.Copy(f, tr)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		case tar.TypeSymlink:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(h.Linkname, p))
		default:
			t.Fatalf("%s: %s has tar type %c", img.Ref, h.Name, h.Typeflag)
		}
	}
}

// inChroot runs argv inside root with the images' PATH and returns its
// output.
func inChroot(t *testing.T, root string, argv ...string) string {
	t.Helper()
	return runWith(t, &syscall.SysProcAttr{Chroot: root}, "", argv...)
}

// runWith runs argv (an absolute path first) with attr and stdin, and returns
// its output.
func runWith(t *testing.T, attr *syscall.SysProcAttr, stdin string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Path = argv[0]
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + imagePath}
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", strings.Join(argv, " "), out)
	return strings.TrimSpace(string(out))
}

// Each image's binaries run inside the image's own filesystem: the control
// plane, etcd, CoreDNS and pause from their paths, kube-proxy and the
// iptables it execs (with their Debian libraries), and iptables-restore
// loads rules into a network namespace's nf_tables.
func TestSlowRootImagesRunInChroot(t *testing.T) {
	testtier.Root(t, "chroots into the images' filesystems and loads iptables rules in a network namespace")
	r := V1_35_4
	a := built(t, r)
	kube := "Kubernetes v" + r.Kubernetes
	want := map[string][][2]string{
		"kube-apiserver":          {{binDir + "/kube-apiserver --version", kube}},
		"kube-controller-manager": {{binDir + "/kube-controller-manager --version", kube}},
		"kube-scheduler":          {{binDir + "/kube-scheduler --version", kube}},
		"kube-proxy": {
			{binDir + "/kube-proxy --version", kube},
			{"/usr/sbin/iptables --version", "nf_tables"},
			{"/usr/sbin/iptables-restore --version", "nf_tables"},
			{"/usr/sbin/iptables-save --version", "nf_tables"},
			{"/usr/sbin/ip6tables-restore --version", "nf_tables"},
			{"/usr/sbin/ip6tables-save --version", "nf_tables"},
		},
		"etcd":    {{binDir + "/etcd --version", "etcd Version: " + r.Etcd}, {binDir + "/etcdctl version", r.Etcd}},
		"coredns": {{"/coredns -version", "CoreDNS-" + r.CoreDNS}},
		"pause":   {{"/pause -v", r.Pause}},
	}
	for _, img := range a.Images {
		t.Run(img.Name, func(t *testing.T) {
			root := t.TempDir()
			flatten(t, img, root)
			checks, ok := want[img.Name]
			require.True(t, ok, img.Name)
			for _, c := range checks {
				assert.Contains(t, inChroot(t, root, strings.Fields(c[0])...), c[1], c[0])
			}
			if img.Name != "kube-proxy" {
				return
			}
			// iptables-restore loads rules and iptables-save reads them back,
			// in a network namespace made for it.
			ipPath, err := exec.LookPath("ip")
			require.NoError(t, err)
			chrootPath, err := exec.LookPath("chroot")
			require.NoError(t, err)
			ns := fmt.Sprintf("cargoship-k8s-test-%d", os.Getpid())
			output(t, "ip", "netns", "add", ns)
			t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
			rules := "*filter\n:KUBE-TEST - [0:0]\n-A KUBE-TEST -p tcp --dport 6443 -j ACCEPT\nCOMMIT\n"
			for _, family := range []string{"iptables", "ip6tables"} {
				inNetns := []string{ipPath, "netns", "exec", ns, chrootPath, root}
				runWith(t, nil, rules, append(inNetns, "/usr/sbin/"+family+"-restore", "--noflush")...)
				out := runWith(t, nil, "", append(inNetns, "/usr/sbin/"+family+"-save")...)
				assert.Contains(t, out, "-A KUBE-TEST -p tcp -m tcp --dport 6443 -j ACCEPT", family)
			}
		})
	}
}
