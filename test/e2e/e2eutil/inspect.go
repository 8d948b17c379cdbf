package e2eutil

import (
	"context"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// Inspector reads hosts over its own connections, separate from the ones
// the phases use, so an assertion sees the host and not cargoship's view
// of it.
type Inspector struct {
	hosts      []v1alpha1.Host
	knownHosts string
	mu         sync.Mutex
	conns      map[string]*host.Conn
}

// NewInspector reads the hosts of an inventory, checking host keys against
// knownHosts ("" reads SSH_KNOWN_HOSTS as the CLI does; a pinned hostKey
// wins). Its connections close when t ends.
func NewInspector(t testing.TB, hosts []v1alpha1.Host, knownHosts string) *Inspector {
	in := &Inspector{hosts: hosts, knownHosts: knownHosts, conns: map[string]*host.Conn{}}
	t.Cleanup(in.closeAll)
	return in
}

func (in *Inspector) closeAll() {
	in.mu.Lock()
	defer in.mu.Unlock()
	for name, c := range in.conns {
		_ = c.Close()
		delete(in.conns, name)
	}
}

// Conn connects to the host the inventory names hostname.
func (in *Inspector) Conn(t testing.TB, hostname string) *host.Conn {
	t.Helper()
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.conns[hostname]; ok {
		return c
	}
	var spec *v1alpha1.Host
	for i := range in.hosts {
		if in.hosts[i].Hostname == hostname {
			spec = &in.hosts[i]
		}
	}
	if spec == nil {
		t.Fatalf("no host %q in the inventory", hostname)
	}
	c, err := host.Connect(context.Background(), spec, host.ConnectOptions{KnownHostsPath: in.knownHosts})
	if err != nil {
		t.Fatalf("inspector: %v", err)
	}
	in.conns[hostname] = c
	return c
}

// Forget closes the connection to hostname, so the next command dials
// again: the host went away (powered off, rebooted) under it.
func (in *Inspector) Forget(hostname string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.conns[hostname]; ok {
		_ = c.Close()
		delete(in.conns, hostname)
	}
}

// Root runs a read-only command as root and returns its trimmed stdout.
func (in *Inspector) Root(t testing.TB, hostname, cmd string) string {
	t.Helper()
	out, err := in.Conn(t, hostname).Sudo(context.Background(), cmd)
	if err != nil {
		t.Fatalf("%s: %s: %v", hostname, cmd, err)
	}
	return strings.TrimSpace(out)
}

// Try runs a command as root and reports whether it succeeded.
func (in *Inspector) Try(t testing.TB, hostname, cmd string) (string, bool) {
	t.Helper()
	out, err := in.Conn(t, hostname).Sudo(context.Background(), cmd)
	return strings.TrimSpace(out), err == nil
}

// SameFingerprint fails with only the lines that differ: a whole /etc
// listing is unreadable in a failure message.
func SameFingerprint(t testing.TB, hostname, before, after, why string) {
	t.Helper()
	if before == after {
		return
	}
	old := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		old[l] = true
	}
	var changed []string
	for _, l := range strings.Split(after, "\n") {
		if !old[l] {
			changed = append(changed, l)
		}
	}
	t.Errorf("%s: %s; changed or new:\n%s", hostname, why, strings.Join(changed, "\n"))
}

// fingerprintDirs are the paths cargoship may write (docs/e2e.md, What a
// run does), rke2's units under /usr/local/lib/systemd included
// (docs/test-engine.md), with the lock's own directory wherever phase 7
// keeps it.
func fingerprintDirs() string {
	dirs := []string{"/etc", "/usr/local/bin", "/usr/local/lib/systemd", "/var/lib/cargoship", "/var/lib/rancher", "/run/lock"}
	if d := path.Dir(phase.LockPath); !strings.Contains(" "+strings.Join(dirs, " ")+" ", " "+d+" ") {
		dirs = append(dirs, d)
	}
	return strings.Join(dirs, " ")
}

// Fingerprint hashes every file under the paths cargoship may write, so a
// test can prove a run changed no byte.
func (in *Inspector) Fingerprint(t testing.TB, hostname string) string {
	t.Helper()
	// Files by content, links by where they point (/etc/mtab points into
	// /proc and reads differently every time). The engine's own datastore
	// changes with every heartbeat: that is the cluster running, not
	// cargoship writing.
	cmd := `for p in ` + fingerprintDirs() + `; do ` +
		`[ -e "$p" ] || continue; ` +
		`find "$p" -xdev -type f ! -path '/etc/machine-id' ! -path '/etc/ld.so.cache' ! -path '/var/lib/rancher/*/server/db/*' -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum; ` +
		`find "$p" -xdev -type l -printf '%p -> %l\n' 2>/dev/null | sort; done; ` +
		`echo "nft $(nft -s list ruleset 2>/dev/null | sha256sum)"`
	return in.Root(t, hostname, cmd)
}
