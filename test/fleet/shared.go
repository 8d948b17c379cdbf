package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"
)

// What every backend shares, exported for the backends that live in
// folders of their own (test/fleet/microvm): naming and counting hosts, the
// fleet's keys and password, the files a fleet writes (inventory,
// known_hosts), the fleet lock and the debootstrap mirror. The container
// backend uses the same functions unexported.

// ValidateSpec checks a spec's name and host counts as every backend does.
func ValidateSpec(spec Spec) error {
	if err := validateName(spec.Name); err != nil {
		return err
	}
	return validateCounts(spec)
}

// PlanHosts names the hosts of a spec (kc0.., kw0.., ki0..) in fleet order
// with their roles and profiles; address gives the i-th host's private
// address.
func PlanHosts(spec Spec, address func(i int) string) ([]Host, error) {
	hosts, err := planHosts(spec, 0)
	if err != nil {
		return nil, err
	}
	for i := range hosts {
		hosts[i].Address = address(i)
	}
	return hosts, nil
}

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
		KeyPath:          filepath.Join(dir, keyFile),
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
func Since(t time.Time) time.Duration { return since(t) }

// ReadyLine and WaitingLine are the progress lines every backend prints
// while a bring-up waits for its hosts.
func ReadyLine(host string, start time.Time) string {
	return fmt.Sprintf("ready: %s %s", host, since(start))
}

// WaitingLine: see ReadyLine.
func WaitingLine(host, state string, start time.Time) string {
	return fmt.Sprintf("waiting: %s %s (%s)", host, state, since(start))
}
