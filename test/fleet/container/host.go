package container

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// hostPaths are a host's files under the fleet dir.
type hostPaths struct {
	root    string // hosts/<name>
	upper   string // overlay upper: everything the host changed
	work    string // overlay work dir
	merged  string // the host's root filesystem
	console string // nspawn's output: the boot log, then the console
	pid     string // the supervisor loop's pid
	node    string // NodeRuntime: /var/lib/containerd and /var/lib/kubelet
}

func pathsFor(fleetDir, host string) hostPaths {
	r := filepath.Join(fleetDir, hostsDir, host)
	return hostPaths{
		root: r, upper: filepath.Join(r, "upper"), work: filepath.Join(r, "work"),
		merged: filepath.Join(r, "merged"), console: filepath.Join(r, "console.log"),
		pid: filepath.Join(r, "pid"), node: filepath.Join(r, nodeDir),
	}
}

// prepareHost mounts a host's overlay and gives it its identity: hostname,
// /etc/hosts, its cached SSH host keys, the fleet key for every login user,
// and the fleet's sudo password for sudopw. All of it lands in the host's
// upper dir; the shared layers are never written. shadowEntry is sudopw's
// /etc/shadow line from a host prepared before (empty for the first); the
// line is returned for the next.
func prepareHost(ctx context.Context, st *fleetState, p hostPaths, h fleet.Host, hostKeyDir, fleetPub, shadowEntry string) (string, error) {
	for _, d := range []string{p.upper, p.work, p.merged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("%s: %w", h.Name, err)
		}
	}
	if err := mountOverlay(st.Lowers, p.upper, p.work, p.merged); err != nil {
		return "", fmt.Errorf("%s: %w", h.Name, err)
	}
	m := p.merged
	files := []backend.RootFile{
		{Path: "etc/hostname", Mode: 0o644, Content: h.Name + "\n"},
		{Path: "etc/hosts", Mode: 0o644, Content: fmt.Sprintf("127.0.0.1\tlocalhost\n%s\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n", h.Address, h.Name)},
	}
	for _, t := range fleet.HostKeyTypes() {
		for _, suffix := range []string{"", ".pub"} {
			name := "ssh_host_" + t + "_key" + suffix
			b, err := os.ReadFile(filepath.Join(hostKeyDir, name))
			if err != nil {
				return "", fmt.Errorf("%s: host key: %w", h.Name, err)
			}
			mode := os.FileMode(0o600) // sshd refuses a private host key others can read
			if suffix != "" {
				mode = 0o644
			}
			files = append(files, backend.RootFile{Path: "etc/ssh/" + name, Mode: mode, Content: string(b)})
		}
	}
	for _, f := range files {
		if err := writeFileMode(filepath.Join(m, f.Path), f.Content, f.Mode); err != nil {
			return "", fmt.Errorf("%s: %w", h.Name, err)
		}
	}
	users, err := readPasswd(filepath.Join(m, "etc/passwd"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", h.Name, err)
	}
	for _, name := range append([]string{fleet.UserRoot}, fleetUsers...) {
		u, ok := users[name]
		if !ok {
			return "", fmt.Errorf("%s: user %s missing from the image (stale rootfs? run dev:fleetImage)", h.Name, name)
		}
		dir := filepath.Join(m, u.home, ".ssh")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("%s: %w", h.Name, err)
		}
		ak := filepath.Join(dir, "authorized_keys")
		if err := writeFileMode(ak, fleetPub, 0o600); err != nil {
			return "", fmt.Errorf("%s: %w", h.Name, err)
		}
		for _, f := range []string{dir, ak} {
			if err := os.Lchown(f, u.uid, u.gid); err != nil {
				return "", fmt.Errorf("%s: %w", h.Name, err)
			}
		}
	}
	if st.NodeRuntime {
		if err := prepareNode(p, h); err != nil {
			return "", err
		}
	}
	entry, err := setSudoPassword(ctx, m, st.SudoPassword, shadowEntry)
	if err != nil {
		return "", fmt.Errorf("%s: set %s password: %w", h.Name, fleet.UserSudoPassword, err)
	}
	return entry, nil
}

// setSudoPassword gives sudopw the fleet's password and returns its
// /etc/shadow line. With no line given, chpasswd inside the host's own tree
// hashes the password the way its PAM expects (yescrypt on bookworm), so
// nothing on this machine has to know the scheme; the other hosts of the
// fleet get that line copied in, because each yescrypt hash costs 0.1-0.4 s
// of CPU.
func setSudoPassword(ctx context.Context, root, password, entry string) (string, error) {
	shadow := filepath.Join(root, "etc/shadow")
	if entry == "" {
		if _, err := commandInput(ctx, fleet.UserSudoPassword+":"+password+"\n", "chroot", root, "/usr/sbin/chpasswd"); err != nil {
			return "", err
		}
		b, err := os.ReadFile(shadow)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, fleet.UserSudoPassword+":") {
				return line, nil
			}
		}
		return "", fmt.Errorf("%s has no %s entry after chpasswd", shadow, fleet.UserSudoPassword)
	}
	st, err := os.Stat(shadow)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(shadow)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(b), "\n")
	found := false
	for i, line := range lines {
		if strings.HasPrefix(line, fleet.UserSudoPassword+":") {
			lines[i], found = entry, true
		}
	}
	if !found {
		return "", fmt.Errorf("%s has no %s entry", shadow, fleet.UserSudoPassword)
	}
	// Written in place (the overlay copies it up), keeping the mode and
	// owner (root:shadow 0640) the file already has.
	if err := os.WriteFile(shadow, []byte(strings.Join(lines, "\n")), st.Mode().Perm()); err != nil {
		return "", err
	}
	return entry, nil
}

// writeFileMode writes a file with exactly mode (os.WriteFile's is masked
// by the umask, and leaves the mode of an existing file alone).
func writeFileMode(path, content string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

type passwdEntry struct {
	uid, gid int
	home     string
}

func readPasswd(path string) (map[string]passwdEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]passwdEntry{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Split(sc.Text(), ":")
		if len(fl) < 7 {
			continue
		}
		uid, err1 := strconv.Atoi(fl[2])
		gid, err2 := strconv.Atoi(fl[3])
		if err1 == nil && err2 == nil {
			out[fl[0]] = passwdEntry{uid: uid, gid: gid, home: fl[5]}
		}
	}
	return out, sc.Err()
}

// supervisorLoop restarts nspawn when the host reboots: `reboot` inside a
// host makes systemd-nspawn exit with 133, any other exit (poweroff, a
// SIGTERM from Down) ends the loop. It is a few lines of sh rather than a
// Go process because the hosts must outlive the test or mage process that
// started them.
//
// It first moves itself into the host's own cgroups (see cgroup.go), so
// nspawn, which keeps the cgroup it starts in, gives the host a tree of its
// own. A join is tried for a minute, a second apart: in CI every host of a
// node fleet has failed it at once, several seconds running, right after
// another node fleet went down, and the same fleet came up when started
// again a minute later. The write is coreutils' echo, not the shell's, so
// the console names the errno (dash says "I/O error" for any failed write).
const supervisorLoop = `for f in $CARGOSHIP_FLEET_CGROUPS; do n=0; until /bin/echo $$ > "$f"; do n=$((n+1)); [ "$n" -lt 60 ] || { echo "cargoship-fleet: cannot join $f"; exit 125; }; sleep 1; done; done
while :; do "$@"; rc=$?; echo "cargoship-fleet: systemd-nspawn exited $rc"; [ "$rc" -eq 133 ] || exit "$rc"; done`

// nspawnArgs is the host's systemd-nspawn command line.
func nspawnArgs(p hostPaths, netns string, h fleet.Host) []string {
	return []string{
		"--boot", "--directory=" + p.merged,
		"--machine=" + netns, "--hostname=" + h.Name,
		// Without --private-network nspawn drops CAP_NET_ADMIN and mounts
		// /proc/sys/net read-only even inside the given namespace: nft
		// and sysctl in the host would then fail.
		netnsArg(netns), "--private-network",
		// This machine's PID 1 is not systemd and there is no machined:
		// registering or creating a scope fails with "Failed to open
		// system bus".
		"--register=no", "--keep-unit",
		"--console=passive", "--link-journal=no",
		// nspawn's seccomp filter blocks fanotify, which fapolicyd needs.
		"--system-call-filter=fanotify_init", "--system-call-filter=fanotify_mark",
	}
}

// startHost starts a host's supervisor loop detached (own session, output
// to the console log) and records its pid. node is Spec.NodeRuntime.
func startHost(p hostPaths, netns string, h fleet.Host, node bool) (int, error) {
	cgroups, err := createHostCgroups(h.Name, netns, node)
	if err != nil {
		return 0, err
	}
	console, err := os.OpenFile(p.console, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", h.Name, err)
	}
	defer console.Close()
	nargs := nspawnArgs(p, netns, h)
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
		// A pure cgroup2 tree in the host, as a bookworm VM has, rather
		// than this machine's v1 hybrid layout. The controllers stay
		// bound to v1 out here, so the host's tree has none of them.
		"SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1",
		"CARGOSHIP_FLEET_CGROUPS=" + strings.Join(cgroups, " "),
	}
	if node {
		nargs, env = nodeNspawn(p, nargs, env)
	}
	args := append([]string{"-c", supervisorLoop, "cargoship-fleet-host", "systemd-nspawn"}, nargs...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Stdout, cmd.Stderr = console, console // stdin: /dev/null
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%s: start systemd-nspawn: %w", h.Name, err)
	}
	pid := cmd.Process.Pid
	// Reap it if it ends while this process lives, so a host that died is
	// seen as dead rather than as a zombie.
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(p.pid, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return pid, fmt.Errorf("%s: %w", h.Name, err)
	}
	return pid, nil
}

// consoleTail returns the end of a host's console log for error messages.
func consoleTail(p hostPaths, n int) string {
	b, err := os.ReadFile(p.console)
	if err != nil {
		return "(no console log: " + err.Error() + ")"
	}
	return fleet.Tail(string(b), n)
}
