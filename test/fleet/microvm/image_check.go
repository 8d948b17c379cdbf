package microvm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// The built-in image's checks, made from inside a guest booted from it.
// TestImageRootBoot makes them on a guest it boots by hand; the phase
// suite's VM bring-up makes them on its own guests, so CI need not boot
// one more for them (issue 32).

// CheckGuestImage asserts what a guest of the built-in image is, reading
// only: its boot settled, SELinux enforcing with the image's labels and
// modules, fapolicyd, firewalld and sshd active, its identity from the
// seed, and no AVC denial from the seed since boot. c is a root
// connection; host and address are the seed's hostname and private
// address. Run it before anything else acts on the guest: a later
// command's denial could read as the seed's.
func CheckGuestImage(t testing.TB, c *ssh.Client, host, address string) {
	t.Helper()
	sh := func(cmd string) (string, error) { return guestRun(c, cmd) }
	must := func(cmd string) string {
		t.Helper()
		out, err := sh(cmd)
		if err != nil {
			t.Errorf("%s: %s: %v: %s", host, cmd, err, out)
		}
		return out
	}
	check := func(cmd, want string) {
		t.Helper()
		if out := must(cmd); !strings.Contains(out, want) {
			t.Errorf("%s: %s = %q, want %q", host, cmd, out, want)
		}
	}
	// wait for the boot to settle before judging it
	state, _ := sh("systemctl is-system-running --wait")
	t.Logf("%s: system %s; %s", host, state, must("systemd-analyze"))
	if state != "running" && state != "degraded" {
		t.Errorf("%s: is-system-running: %s; failed units: %s", host, state, must("systemctl --failed --no-legend"))
	}
	if state == "degraded" {
		t.Logf("%s: degraded; failed units: %s", host, must("systemctl --failed --no-legend"))
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
	// sudopw's password is the seed's
	check("getent shadow sudopw | cut -d: -f2 | cut -c1-3", "$")

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
			t.Errorf("%s: AVC denial from the seed: %s", host, l)
		} else {
			t.Logf("%s: AVC denial (not the seed's): %s", host, l)
		}
	}
}

// CheckGuestEnforces asserts that the image's policies bite, by acting:
// fapolicyd keeps a non-root user from an untrusted binary, a
// container_runtime_exec_t binary started by systemd runs in
// container_runtime_t, and, with labelling, semanage fcontext with
// restorecon labels a file. It takes back what it did (its files, the
// file context and the files semanage wrote for it), so the phase suite
// can walk the guest afterwards as a fresh one. The phase suite passes
// labelling false: its SELinux phase labels the engine's binary with
// semanage and restorecon on every guest and asserts the label, and the
// probe's two policy rebuilds took minutes of a loaded CI run.
func CheckGuestEnforces(t testing.TB, c *ssh.Client, host string, labelling bool) {
	t.Helper()
	const (
		untrusted = "/tmp/untrusted-true"
		double    = "/usr/local/bin/engine-double"
		// not the engine's own path: the suite's package labels that one
		probe = "/usr/local/bin/fcontext-probe"
	)
	must := func(cmd string) string {
		t.Helper()
		out, err := guestRun(c, cmd)
		if err != nil {
			t.Errorf("%s: %s: %v: %s", host, cmd, err, out)
		}
		return out
	}
	check := func(cmd, want string) {
		t.Helper()
		if out := must(cmd); !strings.Contains(out, want) {
			t.Errorf("%s: %s = %q, want %q", host, cmd, out, want)
		}
	}
	labelled, created := false, []string{}
	defer func() {
		undo := "systemctl stop engine-double 2>/dev/null; rm -f " + untrusted + " " + double + " " + probe
		if labelled {
			undo += " && semanage fcontext -d " + probe + " && rm -f " + strings.Join(created, " ")
		}
		if out, err := guestRun(c, undo); err != nil {
			t.Errorf("%s: taking back the enforcement checks: %v: %s", host, err, out)
		}
	}()

	// fapolicyd: a non-root user may not run an untrusted copy of a binary;
	// root may (sample rule 20)
	must("cp /usr/bin/true " + untrusted + " && chmod 755 " + untrusted)
	if out, err := guestRun(c, "runuser -u tester -- "+untrusted); err == nil {
		t.Errorf("%s: tester ran an untrusted binary under fapolicyd: %s", host, out)
	} else {
		t.Logf("%s: tester running an untrusted binary: %v: %s", host, err, out)
	}
	must(untrusted)
	must("runuser -u tester -- /usr/bin/true")

	// the container-selinux double: a container_runtime_exec_t binary
	// started by systemd runs in container_runtime_t, under enforcing
	must("cp /bin/sleep " + double + " && chcon -t container_runtime_exec_t " + double)
	must("systemd-run --unit=engine-double " + double + " 300")
	time.Sleep(2 * time.Second)
	check("ps -eZ | grep engine-double", ":container_runtime_t:")
	check("systemctl is-active engine-double", "active")
	must("systemctl stop engine-double")
	if !labelling {
		return
	}
	// semanage fcontext and restorecon, as the e2e suite labels k3s.
	// semanage writes the local file contexts out when the first is added
	// and leaves them, empty, when the last goes: the ones it creates go
	// with the probe's context.
	out, err := guestRun(c, `for f in `+strings.Join(localFileContexts, " ")+`; do [ -e "$f" ] || echo "$f"; done`)
	if err != nil {
		t.Errorf("%s: looking for the local file contexts: %v: %s", host, err, out)
		return
	}
	created = strings.Fields(out)
	if out, err := guestRun(c, "semanage fcontext -a -t container_runtime_exec_t "+probe); err != nil {
		t.Errorf("%s: semanage fcontext -a: %v: %s", host, err, out)
		return
	}
	labelled = true
	must("cp /bin/true " + probe + " && restorecon -v " + probe)
	check("ls -Z "+probe, ":container_runtime_exec_t:")
}

// CheckFleetImage makes CheckGuestImage on every guest of a fleet just
// brought up, over one connection each, all at once: an emulated guest
// spends most of it waiting on its own vCPUs.
func CheckFleetImage(ctx context.Context, t testing.TB, f *fleet.Fleet) {
	t.Helper()
	var wg sync.WaitGroup
	for _, h := range f.Hosts {
		wg.Go(func() {
			start := time.Now()
			c, err := f.Dial(ctx, h.Name, fleet.UserRoot)
			if err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = c.Close() }()
			CheckGuestImage(t, c, h.Name, h.Address)
			t.Logf("%s: the image's checks took %s", h.Name, fleet.Since(start))
		})
	}
	wg.Wait()
}

// CheckFleetEnforces makes CheckGuestEnforces on one guest of a fleet.
func CheckFleetEnforces(ctx context.Context, t testing.TB, f *fleet.Fleet, host string, labelling bool) {
	t.Helper()
	c, err := f.Dial(ctx, host, fleet.UserRoot)
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	CheckGuestEnforces(t, c, host, labelling)
}

// localFileContexts are the files semanage keeps the local file contexts
// in, under the image's policy (SELINUXTYPE=default): its store, and what
// it writes out for the labelling tools.
var localFileContexts = []string{
	"/var/lib/selinux/default/active/file_contexts.local",
	"/etc/selinux/default/contexts/files/file_contexts.local",
	"/etc/selinux/default/contexts/files/file_contexts.local.bin",
}

// guestRun runs cmd in a new session of c and returns its trimmed output,
// stdout and stderr together.
func guestRun(c *ssh.Client, cmd string) (string, error) {
	s, err := c.NewSession()
	if err != nil {
		return "", err
	}
	defer func() { _ = s.Close() }()
	out, err := s.CombinedOutput(cmd)
	return strings.TrimSpace(string(out)), err
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
