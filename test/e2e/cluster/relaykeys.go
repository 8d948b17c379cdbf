package cluster

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// staleRelayLine is the authorized_keys line a relay leaves when its
// cargoship is killed outright (docs/reference/hosts.md §11.2), granted
// long ago: what reset must remove.
func staleRelayLine(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	sp, err := ssh.NewPublicKey(pub)
	require.NoError(t, err)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
	return `restrict,from="192.0.2.1",command="exec cat > '/var/tmp/x.cargoship-part'" ` + key + " cargoship-relay-1700000000-0123456789abcdef01234567"
}

// loginUser is the user cargoship logs in to hostname as.
func loginUser(t *testing.T, w *world, hostname string) string {
	t.Helper()
	for _, h := range w.views.All.Spec.Hosts {
		if h.Hostname != hostname {
			continue
		}
		switch {
		case h.SSH != nil && h.SSH.User != "":
			return h.SSH.User
		case h.OpenSSH != nil && h.OpenSSH.User != "":
			return h.OpenSSH.User
		}
		return "root"
	}
	t.Fatalf("no host %q in the inventory", hostname)
	return ""
}

// plantRelayLine appends line to the login user's authorized_keys on
// hostname, as a killed relay would have left it.
func plantRelayLine(t *testing.T, w *world, in *inspector, hostname, line string) {
	t.Helper()
	home := strings.TrimSpace(in.root(t, hostname, "getent passwd "+shell.Quote(loginUser(t, w, hostname))+" | cut -d: -f6"))
	require.NotEmpty(t, home, "%s: the login user's home", hostname)
	in.root(t, hostname, "printf '%s\\n' "+shell.Quote(line)+" >> "+shell.Quote(home+"/.ssh/authorized_keys"))
}

// relayLinesOn is every relay line in any user's authorized_keys on hostname.
func relayLinesOn(t *testing.T, in *inspector, hostname string) string {
	t.Helper()
	return strings.TrimSpace(in.root(t, hostname, `getent passwd | cut -d: -f6 | while read -r d; do cat "$d/.ssh/authorized_keys" 2>/dev/null; done | grep cargoship-relay- || true`))
}
