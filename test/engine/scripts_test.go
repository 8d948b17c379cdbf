package testengine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	testengine "github.com/colonel-byte/cargoship/test/engine"
)

// chrootScript runs inside a private mount namespace: the host's /usr
// read-only under the chroot, a fresh /usr/local holding the staged
// files, and then the given script in the chroot with a systemctl that
// only records its arguments. Nothing outside the chroot is touched.
const chrootScript = `set -eu
R=$1 STAGE=$2 SCRIPT=$3
mount --make-rprivate /
mount --bind /usr "$R/usr"
mount -o remount,bind,ro "$R/usr"
mount -t tmpfs tmpfs "$R/usr/local"
mkdir -p "$R/dev" && touch "$R/dev/null" && mount --bind /dev/null "$R/dev/null"
cp -a "$STAGE/." "$R/usr/local/"
rc=0
chroot "$R" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin "$SCRIPT" >"$R/script.out" 2>&1 || rc=$?
echo "SCRIPT-EXIT=$rc" >>"$R/script.out"
(cd "$R/usr/local" && find . -mindepth 1 | sort) >"$R/usr-local.txt"
`

// fakeSystemctl stands in for systemctl in the chroot.
const fakeSystemctl = "#!/bin/sh\necho \"$*\" >>/systemctl.log\n"

// runInChroot lays out the engine's package (Layout) plus extra files in
// a chroot, runs script there and returns the chroot and what stayed in
// /usr/local.
func runInChroot(t *testing.T, engine string, roles []string, files map[string]string, script string) (string, []string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: runs the scripts in a chroot in a private mount namespace (run `sudo go test ./test/engine/...`)")
	}
	root, stage := t.TempDir(), t.TempDir()
	for _, d := range []string{"usr", "etc", "run", "var/lib", "opt", "tmp"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		require.NoError(t, os.Symlink("usr/"+l, filepath.Join(root, l)))
	}
	layout, err := testengine.Layout(engine)
	require.NoError(t, err)
	put := func(target string, data []byte, mode os.FileMode) {
		dir := root
		if rest, ok := strings.CutPrefix(target, "/usr/local/"); ok {
			dir, target = stage, rest
		}
		p := filepath.Join(dir, target)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, mode))
	}
	for _, f := range layout {
		if f.Role != testengine.RoleAll && !contains(roles, f.Role) {
			continue
		}
		data := []byte("stand-in for " + f.Source)
		if f.Source != testengine.SourceBinary && f.Source != testengine.SourceKubectl {
			data, err = testengine.Unit(f.Source)
			require.NoError(t, err)
		}
		put(f.Target, data, f.Mode)
	}
	put("/usr/local/bin/systemctl", []byte(fakeSystemctl), 0o755)
	for p, content := range files {
		put(p, []byte(content), 0o600)
	}
	out, err := exec.Command("unshare", "--mount", "sh", "-c", chrootScript, "sh", root, stage, script).CombinedOutput()
	require.NoError(t, err, "%s", out)
	left, err := os.ReadFile(filepath.Join(root, "usr-local.txt"))
	require.NoError(t, err)
	return root, strings.Fields(string(left))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// What the engine wrote on a k3s server, for the uninstall to remove.
var k3sState = map[string]string{
	"/etc/rancher/k3s/config.yaml":          "token: x\n",
	"/etc/rancher/k3s/k3s.yaml":             "kubeconfig\n",
	"/etc/rancher/node/password":            "pw\n",
	"/var/lib/rancher/k3s/server/token":     "K10...\n",
	"/etc/systemd/system/k3s.service.env":   "K3S_TOKEN=x\n",
	"/run/k3s/containerd/containerd.sock":   "",
	"/var/lib/kubelet/pods/x":               "",
	"/var/lib/cni/networks/x":               "",
	"/var/lib/rancher/k3s/agent/images/a.t": "",
}

// k3s-uninstall.sh stops and disables the unit, then removes the engine's
// files and directories, keeping /etc/rancher/node as k3s does.
func TestK3sUninstallRemovesWhatTheEngineWrote(t *testing.T) {
	root, left := runInChroot(t, "k3s", []string{testengine.RoleServer}, k3sState, "/usr/local/bin/k3s-uninstall.sh")
	assert.Contains(t, read(t, filepath.Join(root, "script.out")), "SCRIPT-EXIT=0")
	for _, gone := range []string{"etc/rancher/k3s", "var/lib/rancher/k3s", "run/k3s", "var/lib/kubelet", "var/lib/cni", "etc/systemd/system/k3s.service", "etc/systemd/system/k3s.service.env"} {
		assert.NoFileExists(t, filepath.Join(root, gone), gone)
		assert.NoDirExists(t, filepath.Join(root, gone), gone)
	}
	assert.FileExists(t, filepath.Join(root, "etc/rancher/node/password"), "k3s keeps the node password")
	assert.Equal(t, []string{"./bin", "./bin/systemctl"}, left, "binary, kubectl link and scripts are gone")
	calls := read(t, filepath.Join(root, "systemctl.log"))
	assert.Contains(t, calls, "stop k3s.service")
	assert.Contains(t, calls, "disable k3s")
	assert.Contains(t, calls, "daemon-reload")
}

// With another k3s unit still installed, the uninstall stops after its
// own unit, as k3s's does.
func TestK3sUninstallKeepsTheEngineForAnotherUnit(t *testing.T) {
	root, left := runInChroot(t, "k3s", []string{testengine.RoleServer, testengine.RoleAgent}, k3sState, "/usr/local/bin/k3s-uninstall.sh")
	assert.Contains(t, read(t, filepath.Join(root, "script.out")), "Additional k3s services installed, skipping uninstall of k3s")
	assert.DirExists(t, filepath.Join(root, "var/lib/rancher/k3s"))
	assert.NoFileExists(t, filepath.Join(root, "etc/systemd/system/k3s.service"))
	assert.FileExists(t, filepath.Join(root, "etc/systemd/system/k3s-agent.service"))
	assert.Contains(t, left, "./bin/k3s")
}

// rke2-uninstall.sh (tarball install under /usr/local) removes the
// binary, scripts, units and every directory rke2's does, node password
// included, and the empty /etc/rancher and /var/lib/rancher.
func TestRKE2UninstallRemovesWhatTheEngineWrote(t *testing.T) {
	root, left := runInChroot(t, "rke2", nil, map[string]string{
		"/etc/rancher/rke2/config.yaml":                           "token: x\n",
		"/etc/rancher/node/password":                              "pw\n",
		"/var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml":     "",
		"/var/lib/rancher/rke2/server/token":                      "K10...\n",
		"/usr/local/share/rke2/rke2-cis-sysctl.conf":              "",
		"/var/lib/kubelet/pods/x":                                 "",
		"/etc/cni/net.d/x":                                        "",
		"/opt/cni/bin/x":                                          "",
		"/var/log/pods/x":                                         "",
		"/run/k3s/containerd/containerd.sock":                     "",
		"/etc/systemd/system/rke2-server.service.d/override.conf": "",
	}, "/usr/local/bin/rke2-uninstall.sh")
	assert.Contains(t, read(t, filepath.Join(root, "script.out")), "SCRIPT-EXIT=0")
	for _, gone := range []string{"etc/rancher", "var/lib/rancher", "var/lib/kubelet", "etc/cni", "opt/cni/bin", "var/log/pods", "run/k3s"} {
		assert.NoDirExists(t, filepath.Join(root, gone), gone)
	}
	assert.Equal(t, []string{"./bin", "./bin/systemctl", "./lib", "./lib/systemd", "./lib/systemd/system", "./share"}, left,
		"binary, scripts, units and share/rke2 are gone")
	calls := read(t, filepath.Join(root, "systemctl.log"))
	for _, c := range []string{"stop rke2-server.service", "stop rke2-agent.service", "disable rke2-server", "disable rke2-agent", "daemon-reload"} {
		assert.Contains(t, calls, c)
	}
}
