package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1alpha1 "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// shellWords is how /bin/sh splits a command line into words.
func shellWords(t *testing.T, cmd string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "set -- "+cmd+`; for a; do printf '%s\0' "$a"; done`).Output()
	require.NoError(t, err, cmd)
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func TestKubectlQuotesEveryArgument(t *testing.T) {
	hostile := []string{"label", "node", "a;reboot", "k=$(id)", "it's", "two words", "`x`", ""}
	want := map[string][]string{
		v1alpha1.EngineRKE2:     {"env", "KUBECONFIG=/etc/rancher/rke2/rke2.yaml", "/var/lib/rancher/rke2/bin/kubectl"},
		v1alpha1.EngineUpstream: {"/usr/bin/kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf"},
	}
	for _, name := range []string{v1alpha1.EngineRKE2, v1alpha1.EngineUpstream} {
		t.Run(name, func(t *testing.T) {
			e, err := For(name)
			require.NoError(t, err)
			cmd := e.Kubectl(hostile...)
			assert.Equal(t, append(append([]string(nil), want[name]...), hostile...), shellWords(t, cmd))
			assert.Contains(t, cmd, "'a;reboot'")
		})
	}
}

// k3s's kubectl is the k3s binary's subcommand, run from whichever of
// its install directories holds it: here only /opt/bin does (Flatcar and
// other hosts with a read-only /usr). Where none does, the command fails
// naming the directories, rather than running nothing.
func TestK3sKubectlFindsTheBinaryWhereverItIs(t *testing.T) {
	e, err := For(v1alpha1.EngineK3s)
	require.NoError(t, err)
	root := t.TempDir()
	moved := func(cmd string) string {
		return strings.NewReplacer("/usr/local/bin/", root+"/usr/local/bin/", "/opt/bin/", root+"/opt/bin/").Replace(cmd)
	}
	hostile := []string{"get", "node", "a;reboot", "it's", ""}
	cmd := moved(e.Kubectl(hostile...))

	_, err = exec.Command("sh", "-c", cmd).Output()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "no k3s anywhere is an error")
	assert.Equal(t, 127, exit.ExitCode())
	assert.Contains(t, string(exit.Stderr), "/usr/local/bin, /opt/bin")

	require.NoError(t, os.MkdirAll(filepath.Join(root, "opt/bin"), 0o755))
	printArgs := "#!/bin/sh\nprintf '%s\\0' \"$0\" \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "opt/bin/k3s"), []byte(printArgs), 0o755))
	out, err := exec.Command("sh", "-c", cmd).Output()
	require.NoError(t, err, cmd)
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	assert.Equal(t, append([]string{filepath.Join(root, "opt/bin/k3s"), "kubectl"}, hostile...), got)
}

func TestImportImagesCommand(t *testing.T) {
	up, _ := For(v1alpha1.EngineUpstream)
	assert.False(t, up.ImportsImagesDirByItself())
	assert.Equal(t, []string{"/usr/bin/ctr", "--namespace", "k8s.io", "images", "import", "/var/lib/cargoship/images/my images;x.tar"},
		shellWords(t, up.ImportImagesCommand("/var/lib/cargoship/images/my images;x.tar")))
	for _, name := range []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2} {
		e, _ := For(name)
		assert.True(t, e.ImportsImagesDirByItself(), name)
		assert.Empty(t, e.ImportImagesCommand("/x.tar"), name)
	}
}

func TestServiceCommands(t *testing.T) {
	k3s, _ := For(v1alpha1.EngineK3s)
	rke2, _ := For(v1alpha1.EngineRKE2)
	up, _ := For(v1alpha1.EngineUpstream)
	assert.Equal(t, "systemctl start --no-block k3s", k3s.StartCommand(true))
	assert.Equal(t, "systemctl stop k3s-agent", k3s.StopCommand(false))
	assert.Equal(t, "systemctl enable rke2-server", rke2.EnableCommand(true))
	assert.Equal(t, "rke2-agent", rke2.Service(false))
	assert.Equal(t, "systemctl start --no-block containerd kubelet", up.StartCommand(false))
	assert.Equal(t, "systemctl stop kubelet", up.StopCommand(true))
	assert.Equal(t, []string{"containerd", "kubelet"}, up.Services(true))
}

func TestTokenCommands(t *testing.T) {
	k3s, _ := For(v1alpha1.EngineK3s)
	rke2, _ := For(v1alpha1.EngineRKE2)
	up, _ := For(v1alpha1.EngineUpstream)
	assert.Equal(t, "/var/lib/rancher/k3s/server/token", k3s.ServerTokenPath())
	assert.Equal(t, "/var/lib/rancher/rke2/server/token", rke2.ServerTokenPath())
	assert.Equal(t, "cat /var/lib/rancher/rke2/server/token", rke2.JoinTokenCommand())
	assert.Empty(t, up.ServerTokenPath())
	assert.Equal(t, "/usr/bin/kubeadm token create --kubeconfig /etc/kubernetes/admin.conf", up.JoinTokenCommand())
	uploader, ok := up.(CertUploader)
	require.True(t, ok, "kubeadm re-uploads certificates for late controller joins")
	assert.Equal(t, "/usr/bin/kubeadm init phase upload-certs --upload-certs --config /etc/cargoship/kubeadm.yaml", uploader.UploadCertsCommand())
	_, ok = k3s.(CertUploader)
	assert.False(t, ok)
}

// firstInstalled must run the first candidate that exists and succeed
// quietly when none does, so VersionCommand reports "not installed" as
// empty output and KillallCommand is safe on a clean host.
func TestFirstInstalledRunsTheFirstPresentBinary(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	second := filepath.Join(dir, "has space")
	require.NoError(t, os.WriteFile(second, []byte("#!/bin/sh\necho \"second $*\"\n"), 0o755))
	third := filepath.Join(dir, "third")
	require.NoError(t, os.WriteFile(third, []byte("#!/bin/sh\necho third\n"), 0o755))

	out, err := exec.Command("sh", "-c", firstInstalled([]string{missing, second, third}, "--version", "a;b")).Output()
	require.NoError(t, err)
	assert.Equal(t, "second --version a;b\n", string(out))

	out, err = exec.Command("sh", "-c", firstInstalled([]string{missing}, "--version")).Output()
	require.NoError(t, err, "nothing installed is not a failure")
	assert.Empty(t, out)
	_, err = ParseVersion(string(out))
	assert.ErrorIs(t, err, ErrNotInstalled)
}

func TestVersionAndKillallCommands(t *testing.T) {
	rke2, _ := For(v1alpha1.EngineRKE2)
	assert.Equal(t, "if [ -x /usr/local/bin/rke2 ]; then /usr/local/bin/rke2 --version; elif [ -x /usr/bin/rke2 ]; then /usr/bin/rke2 --version; elif [ -x /opt/rke2/bin/rke2 ]; then /opt/rke2/bin/rke2 --version; fi",
		rke2.VersionCommand())
	assert.Contains(t, rke2.KillallCommand(), "/usr/bin/rke2-killall.sh", "RPM installs put it in /usr/bin")
	up, _ := For(v1alpha1.EngineUpstream)
	assert.Equal(t, "if [ -x /usr/bin/kubelet ]; then /usr/bin/kubelet --version; elif [ -x /usr/local/bin/kubelet ]; then /usr/local/bin/kubelet --version; fi",
		up.VersionCommand(), "kubeadm nodes read as their kubelet's version, which an upgrade changes last")
	assert.Contains(t, up.KillallCommand(), "/usr/bin/kubeadm reset --force")
}
