package microvm

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// TestImageRootBoot builds the built-in image (or finds it cached) and
// boots one guest from it the way the backend does: a qcow2 overlay, a seed
// volume, guest.args. It needs root for the build (debootstrap, chroot, a
// loop mount) and takes about ten minutes cold under TCG, one or two warm.
func TestImageRootBoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the image build runs debootstrap and chroot")
	}
	if err := CheckTools(); err != nil {
		t.Skip(err)
	}
	for _, tool := range []string{"debootstrap", "mkfs.ext4", "e2fsck"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s: %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, nil))
	cache, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	im, err := EnsureImage(ctx, cache, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s ready in %s: %+v", im.Recipe[:12], fleet.Since(start), im)

	dir := t.TempDir()
	const host, octet, fleetName = "kc0", 200, "imgtest"
	keyDir, err := fleet.EnsureHostKeys(dir, fleetName, host)
	if err != nil {
		t.Fatal(err)
	}
	hostKeys := map[string][]byte{}
	for _, ty := range fleet.HostKeyTypes() {
		for _, n := range []string{"ssh_host_" + ty + "_key", "ssh_host_" + ty + "_key.pub"} {
			b, err := os.ReadFile(filepath.Join(keyDir, n))
			if err != nil {
				t.Fatal(err)
			}
			hostKeys[n] = b
		}
	}
	hostPubs, err := fleet.HostPublicKeys(keyDir)
	if err != nil {
		t.Fatal(err)
	}
	_, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(clientPriv)
	if err != nil {
		t.Fatal(err)
	}
	address := guestAddress(octet, 0)
	id := identity{
		Hostname: host, Address: address,
		Hosts:         [][2]string{{address, host}},
		HostKeys:      hostKeys,
		AuthorizedKey: fleet.AuthorizedKey(signer.PublicKey(), "image-root-test"),
		Users:         []string{fleet.UserRoot, fleet.UserTester, fleet.UserSudoPassword},
		SudoUser:      fleet.UserSudoPassword, SudoPassword: "Secret123",
	}
	seed := filepath.Join(dir, "seed.img")
	if err := writeSeedVolume(ctx, seed, seedFiles(fleetName, id)); err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(dir, "overlay.qcow2")
	if err := createOverlay(ctx, im.Disk, disk); err != nil {
		t.Fatal(err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	g := guest{
		Name: "cargoship-imgtest-" + host, MemoryMiB: 2048, CPUs: 2, Accel: DetectAccel().Name,
		Kernel: im.Kernel, Initrd: im.Initrd, Cmdline: im.Cmdline,
		Disk: disk, Seed: seed, SSHPort: port, MAC: guestMAC(octet, 0), Segment: segmentGroup(octet),
		Console: filepath.Join(dir, "console.log"), QMP: filepath.Join(dir, "qmp.sock"), PIDFile: filepath.Join(dir, "qemu.pid"),
	}
	bootStart := time.Now()
	if err := run(ctx, "qemu-system-x86_64", g.args()...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		powerOff(t, g)
		if t.Failed() { // t.TempDir goes with the test: keep the console
			keep := filepath.Join(os.TempDir(), "cargoship-image-root-console.log")
			if b, err := os.ReadFile(g.Console); err == nil && os.WriteFile(keep, b, 0o644) == nil {
				t.Logf("the guest's console is kept in %s", keep)
			}
		}
	})
	consoleTail := func() string {
		b, _ := os.ReadFile(g.Console)
		return lastBytes(b, 4000)
	}

	cfg := &ssh.ClientConfig{
		User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			for _, k := range hostPubs {
				if bytes.Equal(k.Marshal(), key.Marshal()) {
					return nil
				}
			}
			return fmt.Errorf("host key %s is not one the seed wrote", ssh.FingerprintSHA256(key))
		},
		Timeout: 20 * time.Second,
	}
	var client *ssh.Client
	deadline := time.Now().Add(6 * time.Minute)
	for {
		client, err = ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), cfg)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SSH to the guest after %s: %v\nconsole:\n%s", fleet.Since(bootStart), err, consoleTail())
		}
		time.Sleep(3 * time.Second)
	}
	defer func() { _ = client.Close() }()
	sshUp := fleet.Since(bootStart)
	sh := func(cmd string) (string, error) {
		s, err := client.NewSession()
		if err != nil {
			return "", err
		}
		defer func() { _ = s.Close() }()
		out, err := s.CombinedOutput(cmd)
		return strings.TrimSpace(string(out)), err
	}
	must := func(cmd string) string {
		t.Helper()
		out, err := sh(cmd)
		if err != nil {
			t.Errorf("%s: %v: %s", cmd, err, out)
		}
		return out
	}
	// the seed marker, which the backend waits for
	for {
		if _, err := sh("test -e " + SeedDoneMarker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", SeedDoneMarker, fleet.Since(bootStart))
		}
		time.Sleep(2 * time.Second)
	}
	// wait for the boot to settle before judging it
	state, _ := sh("systemctl is-system-running --wait")
	t.Logf("ssh up %s after qemu started, system %s after %s; %s", sshUp, state, fleet.Since(bootStart), must("systemd-analyze"))
	if state != "running" && state != "degraded" {
		t.Errorf("is-system-running: %s; failed units: %s", state, must("systemctl --failed --no-legend"))
	}
	if state == "degraded" {
		t.Logf("degraded; failed units: %s", must("systemctl --failed --no-legend"))
	}

	check := func(cmd, want string) {
		t.Helper()
		if out := must(cmd); !strings.Contains(out, want) {
			t.Errorf("%s = %q, want %q", cmd, out, want)
		}
	}
	check("getenforce", "Enforcing")
	check("systemctl is-active fapolicyd", "active")
	check("systemctl is-active firewalld", "active")
	check("systemctl is-active ssh", "active")
	check("hostname", host)
	check("ip -4 addr show "+PrivateInterface, address+"/24")
	check("ip -4 addr show enp0s3", "10.0.2.15/")
	check("ls -Z /usr/sbin/sshd", ":sshd_exec_t:")
	check("ls -Z /etc/ssh/ssh_host_ed25519_key", ":sshd_key_t:")
	check("ls -Z "+SeedDoneMarker, ":var_lib_t:")
	check("semodule -l", containerDoubleModule)
	check("semodule -l", fapolicydModule)
	check("semodule -l", firewalldModule)
	// firewalld answers root's firewall-cmd (its D-Bus replies are allowed)
	check("timeout 60 firewall-cmd --state", "running")
	must("fapolicyd-cli --check-config")
	check("cat /etc/machine-id | wc -c", "33")
	check("systemctl show -p Result,ActiveState "+seedUnit, "Result=success")
	check("ps -eZ | grep -w fapolicyd", "fapolicyd")

	// no denial from the seed unit since boot: its script runs as
	// initrc_t, its mount as mount_t. Denials of Debian 12's own units
	// (udevd, tmpfiles) are logged, not failed: they are the policy's,
	// not the image's (docs/reference/microvm.md §6).
	out, _ := sh("ausearch -m avc,user_avc -ts boot 2>/dev/null; journalctl -b -k --no-pager | grep 'avc:  denied' || true")
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "denied") {
			continue
		}
		if seedDenial(l) {
			t.Errorf("AVC denial from the seed: %s", l)
		} else {
			t.Logf("AVC denial (not the seed's): %s", l)
		}
	}

	// fapolicyd: a non-root user may not run an untrusted copy of a binary;
	// root may (sample rule 20)
	must("cp /usr/bin/true /tmp/untrusted-true && chmod 755 /tmp/untrusted-true")
	if out, err := sh("runuser -u tester -- /tmp/untrusted-true"); err == nil {
		t.Errorf("tester ran an untrusted binary under fapolicyd: %s", out)
	} else {
		t.Logf("tester running an untrusted binary: %v: %s", err, out)
	}
	must("/tmp/untrusted-true")
	must("runuser -u tester -- /usr/bin/true")

	// the container-selinux double: a container_runtime_exec_t binary
	// started by systemd runs in container_runtime_t, under enforcing
	must("cp /bin/sleep /usr/local/bin/engine-double && chcon -t container_runtime_exec_t /usr/local/bin/engine-double")
	must("systemd-run --unit=engine-double /usr/local/bin/engine-double 300")
	time.Sleep(2 * time.Second)
	check("ps -eZ | grep engine-double", ":container_runtime_t:")
	check("systemctl is-active engine-double", "active")
	must("systemctl stop engine-double")
	// semanage fcontext and restorecon, as the e2e suite labels k3s
	must("semanage fcontext -a -t container_runtime_exec_t /usr/local/bin/k3s && cp /bin/true /usr/local/bin/k3s && restorecon -v /usr/local/bin/k3s")
	check("ls -Z /usr/local/bin/k3s", ":container_runtime_exec_t:")

	// sudopw's password is the seed's
	check("getent shadow sudopw | cut -d: -f2 | cut -c1-3", "$")
	t.Logf("proof boot: ssh up %s, settled %s", sshUp, fleet.Since(bootStart))
}

// seedCommands are what the seed script and its user-data run.
var seedCommands = []string{"seed", "sh", "mount", "umount", "mkdir", "rmdir", "base64", "chmod", "chown",
	"chpasswd", "restorecon", "hostname", "touch", "dirname", "printf", "selinuxenabled"}

// seedDenial says whether an AVC line is the seed's: its domain, or one of
// its commands.
func seedDenial(line string) bool {
	if strings.Contains(line, ":initrc_t:") || strings.Contains(line, ":mount_t:") {
		return true
	}
	for _, c := range seedCommands {
		if strings.Contains(line, `comm="`+c+`"`) {
			return true
		}
	}
	return false
}

// powerOff quits qemu over QMP, or kills it by its pid.
func powerOff(t *testing.T, g guest) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if q, err := dialQMP(ctx, g.QMP); err == nil {
		_ = q.quit()
		_ = q.close()
	}
	b, err := os.ReadFile(g.PIDFile)
	if err != nil {
		return
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 {
		return
	}
	for i := 0; i < 50; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("qemu %d did not quit over QMP: killing it", pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
