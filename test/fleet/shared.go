package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// What every backend shares, exported for the backends, which live in
// folders of their own (test/fleet/container, test/fleet/microvm): naming
// and counting hosts, the fleet's keys and password, the files a fleet
// writes (inventory, known_hosts), the fleet lock, the debootstrap mirror
// and progress lines.

// ValidateSpec checks a spec's name and host counts as every backend does.
func ValidateSpec(spec Spec) error {
	if err := validateName(spec.Name); err != nil {
		return err
	}
	return validateCounts(spec)
}

// ValidateName checks a fleet name as ValidateSpec does.
func ValidateName(name string) error { return validateName(name) }

// PlanHosts names the hosts of a spec (kc0.., kw0.., ki0..) in fleet order
// with their roles and profiles; address gives the i-th host's private
// address.
func PlanHosts(spec Spec, address func(i int) string) ([]Host, error) {
	return planHosts(spec, address)
}

// KeyPath is where the fleet kept in dir has its login key (NewFleet's
// KeyPath; NewFleetKey writes it).
func KeyPath(dir string) string { return filepath.Join(dir, keyFile) }

// NewFleetKey writes the fleet's ed25519 login key to path (0600) and
// path.pub.
func NewFleetKey(path, fleet string) error { return newFleetKey(path, fleet) }

// EnsureHostKeys returns the directory of a host's cached SSH host keys,
// generating them on first use (see ensureHostKeys).
func EnsureHostKeys(cacheDir, fleet, host string) (string, error) {
	return ensureHostKeys(cacheDir, fleet, host)
}

// HostKeyTypes are the host key types EnsureHostKeys writes, as
// ssh_host_<type>_key and .pub.
func HostKeyTypes() []string { return append([]string(nil), hostKeyTypes...) }

// HostPublicKeys reads the public keys EnsureHostKeys wrote.
func HostPublicKeys(keyDir string) ([]ssh.PublicKey, error) { return hostPublicKeys(keyDir) }

// AuthorizedKey renders a public key in authorized_keys form.
func AuthorizedKey(pub ssh.PublicKey, comment string) string { return authorizedKey(pub, comment) }

// NewPassword makes a sudo password: letters and digits only.
func NewPassword() (string, error) { return newPassword() }

// NewFleet is the public view of a fleet kept in dir: its key, known_hosts
// and inventory at the paths every backend uses.
func NewFleet(dir, name, backend string, hosts []Host, sudoPassword, privateInterface string) *Fleet {
	return &Fleet{
		Name: name, Backend: backend, Dir: dir, Hosts: append([]Host(nil), hosts...),
		KeyPath:          KeyPath(dir),
		KnownHostsPath:   filepath.Join(dir, knownHostsFile),
		InventoryPath:    filepath.Join(dir, inventoryFile),
		SudoUser:         UserSudoPassword,
		SudoPassword:     sudoPassword,
		PrivateInterface: privateInterface,
	}
}

// WriteFleetFiles writes a fleet's known_hosts (every key of every host,
// by SSH endpoint), its sudo password file and its root inventory.
func WriteFleetFiles(f *Fleet, keys map[string][]ssh.PublicKey) error {
	return writeFleetFiles(f, keys)
}

// WriteFileAtomic writes path through a temporary file and a rename.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return writeFileAtomic(path, data, mode)
}

// Lock is an flock(2) held until Release.
type Lock struct{ l *fileLock }

// AcquireLock takes an exclusive lock on path, waiting until ctx is done and
// saying once that it waits.
func AcquireLock(ctx context.Context, path, what string, log *slog.Logger) (*Lock, error) {
	l, err := acquireLock(ctx, path, what, log)
	if err != nil {
		return nil, err
	}
	return &Lock{l: l}, nil
}

// Release drops the lock.
func (l *Lock) Release() { l.l.release() }

// DebianMirror is the mirror the built-in images are bootstrapped from:
// this machine's own apt source (see debianMirror).
func DebianMirror() string { return debianMirror() }

// Since is a duration for progress lines: tenths under 10 s, seconds after.
func Since(t time.Time) time.Duration {
	d := time.Since(t)
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// ReadyLine and WaitingLine are the progress lines every backend prints
// while a bring-up waits for its hosts.
func ReadyLine(host string, start time.Time) string {
	return fmt.Sprintf("ready: %s %s", host, Since(start))
}

// WaitingLine: see ReadyLine.
func WaitingLine(host, state string, start time.Time) string {
	return fmt.Sprintf("waiting: %s %s (%s)", host, state, Since(start))
}

// RunOn runs cmd in a new session on a client from Dial, as Run does.
func RunOn(ctx context.Context, client *ssh.Client, host, user, input, cmd string) (string, string, error) {
	return runOn(ctx, client, host, user, input, cmd)
}

// Tail returns at most the last n bytes of s, trimmed, for error messages.
func Tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
