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

// TestImageRootBuild builds the built-in image, or finds it cached, and
// boots nothing. CI runs it before the phase suite, which makes
// TestImageRootBoot's checks on its own guests (issue 32): a cold build
// stays out of the suite's time, as it did in TestImageRootBoot's.
func TestImageRootBuild(t *testing.T) {
	im := rootImage(t)
	for _, f := range []string{im.Kernel, im.Initrd, im.Disk} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

// TestImageRootBoot builds the built-in image (or finds it cached) and
// boots one guest from it the way the backend does: a qcow2 overlay, a seed
// volume, guest.args. It needs root for the build (debootstrap, chroot, a
// loop mount) and takes about ten minutes cold under TCG, one or two warm.
// CI makes its checks on the phase suite's guests instead; this test makes
// them on a guest booted without the backend.
func TestImageRootBoot(t *testing.T) {
	im := rootImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()

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
	// the seed marker, which the backend waits for
	for {
		if _, err := guestRun(client, "test -e "+SeedDoneMarker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", SeedDoneMarker, fleet.Since(bootStart))
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("ssh up %s after qemu started, seeded after %s", sshUp, fleet.Since(bootStart))
	CheckGuestImage(t, client, host, address)
	CheckGuestEnforces(t, client, host, true)
	t.Logf("proof boot: ssh up %s, checked %s", sshUp, fleet.Since(bootStart))
}

// rootImage is the built-in image, built when it is not cached; the test
// skips where it cannot be built.
func rootImage(t *testing.T) Image {
	t.Helper()
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
	// a cold build beside the other lanes took 40 minutes loaded 20 deep
	ctx, cancel := context.WithTimeout(context.Background(), 75*time.Minute)
	defer cancel()
	cache, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	im, err := EnsureImage(ctx, cache, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s ready in %s: %+v", im.Recipe[:12], fleet.Since(start), im)
	return im
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

func lastBytes(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
