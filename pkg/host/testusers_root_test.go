package host

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The test users get a suffix per run, so two runs on one machine (a
// developer and CI, two engineers) never delete each other's users. Each
// user's comment names the pid of the run that made it; a run sweeps up
// users whose run is gone.
var (
	userNoPW   string // NOPASSWD sudo
	userPW     string // sudo with a password
	userNoSudo string // no sudo rights
	// sudo with a password, but sh runs without one ("sh -c true" still
	// asks): sudo -S then never reads the password for a command
	userPWSh string
	// sudo with a password, but "true" runs without one
	userPWTrue string
	// a broken or hostile host: its login shell is hostileShell
	userHostile string
	sudoersD    string // this run's sudoers drop-in
	testUsers   []string
)

// userMark starts the comment of every test user: the creating pid follows.
const userMark = "cargoship test, pid "

func (f *fixture) makeUsers() error {
	sweepUsers()
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	suffix := hex.EncodeToString(b[:])
	userNoPW, userPW, userNoSudo = "cstest-nopw-"+suffix, "cstest-pw-"+suffix, "cstest-nosudo-"+suffix
	userPWSh, userPWTrue = "cstest-pwsh-"+suffix, "cstest-pwtrue-"+suffix
	userHostile = "cstest-hostile-" + suffix
	sudoersD = "/etc/sudoers.d/cargoship-test-" + suffix // no '.' in the name, or sudo skips it
	testUsers = []string{userNoPW, userPW, userNoSudo, userPWSh, userPWTrue}
	f.usersMade = true
	f.password = "pw-" + hex.EncodeToString(b[:]) + strconv.Itoa(os.Getpid())
	comment := userMark + strconv.Itoa(os.Getpid())
	for _, u := range testUsers {
		if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", "-c", comment, u).CombinedOutput(); err != nil {
			return fmt.Errorf("useradd %s: %w: %s", u, err, out)
		}
	}
	shell := filepath.Join(f.dir, "hostile-shell")
	if err := os.WriteFile(shell, []byte(hostileShell), 0o755); err != nil {
		return err
	}
	testUsers = append(testUsers, userHostile)
	if out, err := exec.Command("useradd", "-m", "-s", shell, "-c", comment, userHostile).CombinedOutput(); err != nil {
		return fmt.Errorf("useradd %s: %w: %s", userHostile, err, out)
	}
	// sshd refuses a locked account ("!") without PAM: '*' is no password
	// but not locked
	for _, u := range []string{userNoPW, userNoSudo, userHostile} {
		if out, err := exec.Command("usermod", "-p", "*", u).CombinedOutput(); err != nil {
			return fmt.Errorf("usermod %s: %w: %s", u, err, out)
		}
	}
	// SHA-512, not PAM's default yescrypt: sudo hashes the password twice
	// per command, and yescrypt's 16 MiB each made every sudo -S command
	// cost a third of a second of CPU
	chpasswd := exec.Command("chpasswd", "-c", "SHA512")
	chpasswd.Stdin = strings.NewReader(userPW + ":" + f.password + "\n" + userPWSh + ":" + f.password + "\n" + userPWTrue + ":" + f.password + "\n")
	if out, err := chpasswd.CombinedOutput(); err != nil {
		return fmt.Errorf("chpasswd: %w: %s", err, out)
	}
	// the last rule that matches wins
	rules := userNoPW + " ALL=(ALL) NOPASSWD: ALL\n" + userPW + " ALL=(ALL) ALL\n" +
		userPWSh + " ALL=(ALL) ALL\n" + userPWSh + " ALL=(ALL) NOPASSWD: /usr/bin/sh, /bin/sh\n" +
		userPWSh + " ALL=(ALL) PASSWD: /usr/bin/sh -c true, /bin/sh -c true\n" +
		userPWTrue + " ALL=(ALL) ALL\n" + userPWTrue + " ALL=(ALL) NOPASSWD: /usr/bin/true, /bin/true\n"
	if err := os.WriteFile(sudoersD, []byte(rules), 0o440); err != nil {
		return err
	}
	if out, err := exec.Command("visudo", "-cf", sudoersD).CombinedOutput(); err != nil {
		return fmt.Errorf("visudo: %w: %s", err, out)
	}
	return nil
}

// hostileShell is userHostile's login shell (sshd runs it as SHELL -c
// CMD). It runs commands as sh does, except: with ~/zeros present it
// answers every command, id -u too, with 3 GB of zeros (on stderr with
// ~/errzeros); a command naming
// cargoship-hostile-stuck ignores every signal and never exits, so sshd
// never closes its channel, and writes its pid to ~/stuck.pid.
const hostileShell = `#!/bin/sh
case "$2" in
*cargoship-hostile-stuck*)
	echo $$ > "$HOME/stuck.pid"
	trap '' TERM HUP INT PIPE
	while :; do head -c 65536 /dev/zero 2>/dev/null; sleep 0.2; done ;;
esac
if [ -e "$HOME/zeros" ]; then exec head -c 3G /dev/zero; fi
if [ -e "$HOME/errzeros" ]; then exec head -c 3G /dev/zero >&2; fi
exec /bin/sh "$@"
`

func (f *fixture) removeUsers() {
	for _, u := range testUsers {
		removeUser(u)
	}
	_ = os.Remove(sudoersD)
}

func removeUser(u string) {
	_ = exec.Command("userdel", "-r", "-f", u).Run()
	if _, suffix, ok := strings.Cut(strings.TrimPrefix(u, "cstest-"), "-"); ok {
		_ = os.Remove("/etc/sudoers.d/cargoship-test-" + suffix)
	}
}

// sweepUsers removes test users whose run has ended without cleaning up.
func sweepUsers() {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return
	}
	defer f.Close()
	var stale []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 5 || !strings.HasPrefix(fields[0], "cstest-") {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(fields[4], userMark))
		if err != nil || !strings.HasPrefix(fields[4], userMark) || alive(pid) {
			continue
		}
		stale = append(stale, fields[0])
	}
	for _, u := range stale {
		removeUser(u)
	}
}

// alive reports whether a process with this pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
