package cluster

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// inspector reads hosts over its own connections, separate from the ones
// the phases use, so an assertion sees the host and not cargoship's view
// of it.
type inspector struct {
	w     *world
	mu    sync.Mutex
	conns map[string]*host.Conn
}

func newInspector(t *testing.T, w *world) *inspector {
	in := &inspector{w: w, conns: map[string]*host.Conn{}}
	t.Cleanup(func() {
		for _, c := range in.conns {
			_ = c.Close()
		}
	})
	return in
}

// conn connects to the host the inventory names hostname.
func (in *inspector) conn(t *testing.T, hostname string) *host.Conn {
	t.Helper()
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.conns[hostname]; ok {
		return c
	}
	var spec *v1alpha1.Host
	for i := range in.w.views.All.Spec.Hosts {
		if in.w.views.All.Spec.Hosts[i].Hostname == hostname {
			spec = &in.w.views.All.Spec.Hosts[i]
		}
	}
	if spec == nil {
		t.Fatalf("no host %q in the inventory", hostname)
	}
	c, err := host.Connect(context.Background(), spec, host.ConnectOptions{KnownHostsPath: in.w.knownHosts})
	if err != nil {
		t.Fatalf("inspector: %v", err)
	}
	in.conns[hostname] = c
	return c
}

// root runs a read-only command as root and returns its trimmed stdout.
func (in *inspector) root(t *testing.T, hostname, cmd string) string {
	t.Helper()
	out, err := in.conn(t, hostname).Sudo(context.Background(), cmd)
	if err != nil {
		t.Fatalf("%s: %s: %v", hostname, cmd, err)
	}
	return strings.TrimSpace(out)
}

// try runs a command as root and reports whether it succeeded.
func (in *inspector) try(t *testing.T, hostname, cmd string) (string, bool) {
	t.Helper()
	out, err := in.conn(t, hostname).Sudo(context.Background(), cmd)
	return strings.TrimSpace(out), err == nil
}

// sameFingerprint fails with only the lines that differ: a whole /etc
// listing is unreadable in a failure message.
func sameFingerprint(t *testing.T, hostname, before, after, why string) {
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

// fingerprint hashes every file under the paths cargoship may write, so a
// test can prove a run changed no byte.
func (in *inspector) fingerprint(t *testing.T, hostname string) string {
	t.Helper()
	// Files by content, links by where they point (/etc/mtab points into
	// /proc and reads differently every time). The engine's own datastore
	// changes with every heartbeat: that is the cluster running, not
	// cargoship writing.
	cmd := `for p in /etc /usr/local/bin /var/lib/cargoship /var/lib/rancher /run/lock; do ` +
		`[ -e "$p" ] || continue; ` +
		`find "$p" -xdev -type f ! -path '/etc/machine-id' ! -path '/etc/ld.so.cache' ! -path '/var/lib/rancher/*/server/db/*' -print0 2>/dev/null | sort -z | xargs -0 -r sha256sum; ` +
		`find "$p" -xdev -type l -printf '%p -> %l\n' 2>/dev/null | sort; done; ` +
		`echo "nft $(nft -s list ruleset 2>/dev/null | sha256sum)"`
	return in.root(t, hostname, cmd)
}
