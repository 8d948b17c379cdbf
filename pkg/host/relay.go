package host

// Peer relays (issue #16 goal 5): a host that holds a verified copy of a
// file sends it to another host itself, so the file leaves the operator's
// machine once. The channel is the receiver's own sshd: the receiver
// authorizes a fresh key for one transfer, bound to the sender's address
// and to a forced command that writes one file, and drops it again
// afterwards (docs/reference/hosts.md §11).

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Peer is a receiving host as a sender reaches it.
type Peer struct {
	// Address is the receiver's private address, the one the sender dials.
	Address string
	// Port is the receiver's sshd port, as sshd -T reports it.
	Port int
	// User is the login user the sender authenticates as.
	User string
	// AuthorizedKeys is the absolute path of the file sshd reads User's
	// keys from.
	AuthorizedKeys string
	// HostKeys are the receiver's public host keys, "type base64" each:
	// the sender trusts these and no others.
	HostKeys []string
	// Root says User is root; otherwise the forced command reaches root
	// through sudo -n, which must not ask for a password.
	Root bool
}

// relayMarker ends every authorized_keys line a relay adds, followed by
// the transfer's id: the line to remove afterwards, and the one a killed
// run left behind. An id is "UNIXSECONDS-HEX": when it was granted, by
// the operator's clock, and 24 random hex digits.
const relayMarker = "cargoship-relay-"

// relayStaleAfter is how old another process's relay line must be before
// a grant takes it for a killed run's and drops it: younger ones may be
// a transfer of another cargoship under way. One transfer of one file
// between two hosts of a fleet's network takes far less.
const relayStaleAfter = time.Hour

// relayKnownHost is the name the sender's ssh checks the receiver's host
// key under (HostKeyAlias): the receiver's keys are listed under it alone,
// whatever address or port the sender dials.
const relayKnownHost = "cargoship-peer"

// revokeTimeout bounds the removal of a transfer's key, which runs even
// when the transfer was cancelled.
const revokeTimeout = 30 * time.Second

// loginPattern is a login name (ownerPattern without a group).
var loginPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$`)

// hostPattern is an IP address or a DNS name: nothing ssh could take for
// an option, and no comma to end sshd's -C connection spec early.
var hostPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]*$`)

// ReadPeer asks the receiver r's sshd how a sender reaches user there:
// sshd -T with a connection spec for user at address gives the port, the
// authorized_keys file (its first AuthorizedKeysFile, tokens expanded)
// and the host keys. address is the receiver's private address, the one
// senders dial; Match blocks are evaluated as for a client at that
// address, which stands for the fleet's network. It reads the sshd
// configuration sshd reads by default (/etc/ssh/sshd_config).
func ReadPeer(ctx context.Context, r Runner, user, address string) (Peer, error) {
	return readPeer(ctx, r, user, address, "")
}

// peerProbe prints sshd -T's configuration for a connection of user $1
// from $2 (read from $3 when set), the user's passwd entry, and the public
// half of each host key: the .pub beside it, else derived from the key.
const peerProbe = `set -e
s=/usr/sbin/sshd
[ -x "$s" ] || s=$(command -v sshd) || { echo "no sshd in /usr/sbin or PATH" >&2; exit 1; }
if [ -n "$3" ]; then c=$("$s" -T -f "$3" -C "user=$1,host=$2,addr=$2"); else c=$("$s" -T -C "user=$1,host=$2,addr=$2"); fi
printf '%s\n' "$c"
pw=$(getent passwd "$1") || { echo "no user $1" >&2; exit 1; }
printf 'cargoship-passwd %s\n' "$pw"
printf '%s\n' "$c" | sed -n 's/^hostkey //p' | while IFS= read -r k; do
	if [ -f "$k.pub" ]; then p=$(head -n 1 -- "$k.pub") || continue; else p=$(ssh-keygen -y -f "$k" 2>/dev/null) || continue; fi
	printf 'cargoship-hostkey %s\n' "$p"
done`

// readPeer is ReadPeer reading sshd's configuration from config ("" for
// sshd's default): the tests' sshd runs with a file of its own.
func readPeer(ctx context.Context, r Runner, user, address, config string) (Peer, error) {
	if !loginPattern.MatchString(user) {
		return Peer{}, fmt.Errorf("%s: reading sshd's configuration: %q is not a login name", r, user)
	}
	if !hostPattern.MatchString(address) {
		return Peer{}, fmt.Errorf("%s: reading sshd's configuration: %q is not an address", r, address)
	}
	out, err := r.Sudo(ctx, Script(peerProbe, user, address, config))
	if err != nil {
		return Peer{}, hostError(ctx, r, "reading sshd's configuration", err)
	}
	p, err := parsePeerProbe(out, user, address)
	if err != nil {
		return Peer{}, fmt.Errorf("%s: reading sshd's configuration: %w", r, err)
	}
	return p, nil
}

// sshdConfig is what a relay needs of sshd -T's output.
type sshdConfig struct {
	port       int
	keysFile   string   // the first AuthorizedKeysFile, tokens unexpanded
	hostKeys   []string // private host key paths
	pubkey     bool     // PubkeyAuthentication
	rootLogin  string   // PermitRootLogin
	configured bool     // a port line was seen
}

// parseSSHDConfig reads sshd -T's "keyword value" lines; keywords it does
// not need, and lines not from sshd, are skipped. sshd prints a list
// (AuthorizedKeysFile) space-separated and unquoted: a path holding a
// space cannot be told apart, and the first word is taken.
func parseSSHDConfig(out string) (sshdConfig, error) {
	var c sshdConfig
	for _, line := range strings.Split(out, "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		val = strings.TrimSpace(val)
		switch strings.ToLower(key) {
		case "port":
			if c.configured {
				continue // the first of several Port lines
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 65535 {
				return c, fmt.Errorf("sshd -T printed port %q", val)
			}
			c.port, c.configured = n, true
		case "authorizedkeysfile":
			if f := strings.Fields(val); len(f) > 0 && c.keysFile == "" {
				c.keysFile = f[0]
			}
		case "hostkey":
			c.hostKeys = append(c.hostKeys, val)
		case "pubkeyauthentication":
			c.pubkey = val == "yes"
		case "permitrootlogin":
			c.rootLogin = val
		}
	}
	switch {
	case !c.configured:
		return c, errors.New("sshd -T printed no port")
	case !c.pubkey:
		return c, errors.New("sshd does not accept keys (PubkeyAuthentication no)")
	case c.keysFile == "" || c.keysFile == "none":
		return c, errors.New("sshd reads no authorized_keys file (AuthorizedKeysFile none)")
	}
	return c, nil
}

// expandKeysFile expands AuthorizedKeysFile's tokens as sshd does (%% a
// percent sign, %h the home directory, %u the user, %U the uid); what is
// not absolute then is relative to the home directory.
func expandKeysFile(pattern, user, home string, uid int) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' {
			b.WriteByte(pattern[i])
			continue
		}
		if i++; i == len(pattern) {
			return "", fmt.Errorf("AuthorizedKeysFile %q ends in a lone %%", pattern)
		}
		switch pattern[i] {
		case '%':
			b.WriteByte('%')
		case 'h':
			b.WriteString(home)
		case 'u':
			b.WriteString(user)
		case 'U':
			b.WriteString(strconv.Itoa(uid))
		default:
			return "", fmt.Errorf("AuthorizedKeysFile %q: unknown token %%%c", pattern, pattern[i])
		}
	}
	p := b.String()
	if !strings.HasPrefix(p, "/") {
		if !strings.HasPrefix(home, "/") {
			return "", fmt.Errorf("AuthorizedKeysFile %q is relative to a home directory, and %s's is %q", pattern, user, home)
		}
		p = strings.TrimSuffix(home, "/") + "/" + p // sshd's "%s/%s", uncleaned
	}
	return p, nil
}

// parsePeerProbe reads peerProbe's output into the Peer a sender needs.
func parsePeerProbe(out, user, address string) (Peer, error) {
	c, err := parseSSHDConfig(out)
	if err != nil {
		return Peer{}, err
	}
	p := Peer{Address: address, Port: c.port, User: user}
	uid, home := -1, ""
	for _, line := range strings.Split(out, "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "cargoship-passwd":
			f := strings.Split(val, ":")
			if len(f) != 7 {
				return Peer{}, fmt.Errorf("unexpected passwd entry %q", val)
			}
			if uid, err = strconv.Atoi(f[2]); err != nil {
				return Peer{}, fmt.Errorf("unexpected passwd entry %q", val)
			}
			home = f[5]
		case "cargoship-hostkey":
			k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(val))
			if err != nil {
				return Peer{}, fmt.Errorf("host key %q: %w", val, err)
			}
			p.HostKeys = append(p.HostKeys, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))))
		}
	}
	if uid < 0 {
		return Peer{}, fmt.Errorf("no passwd entry for %s", user)
	}
	if len(p.HostKeys) == 0 {
		return Peer{}, fmt.Errorf("none of sshd's host keys %q could be read", c.hostKeys)
	}
	p.Root = uid == 0
	if p.Root && c.rootLogin == "no" {
		return Peer{}, errors.New("sshd refuses root logins (PermitRootLogin no)")
	}
	if p.AuthorizedKeys, err = expandKeysFile(c.keysFile, user, home, uid); err != nil {
		return Peer{}, err
	}
	return p, nil
}

// RelayGrantSuffix names the record a relay keeps beside its part file:
// the transfer's id while the key may write, "revoked" afterwards. While
// it exists the part is one a relay wrote (see Upload).
const RelayGrantSuffix = ".grant"

// Relay copies the file src on host from into the file part on host to,
// through to's own sshd: nothing passes through this machine. to
// authorizes a fresh key for this one transfer, usable from fromAddress
// only (the address to sees from's connections come from), until an
// expiry-time, and only to write at most size bytes to part for a bounded
// time (relayLife); from connects with it, checking to's host keys, and
// sends src. The key is removed from to's authorized_keys afterwards,
// whatever happened, and from keeps no copy of it. part is started
// afresh, root's and 0600; Relay returns the bytes it holds at the end.
//
// The sender is trusted with the key while the grant lasts, and a sender
// that is not to be trusted may keep a session open past the revoke and
// write into part later. So part's bytes are not the file: Upload checks
// and places a copy of them that no one else holds (finishScript), and
// the grant record beside part stops every session the revoke did not.
func Relay(ctx context.Context, from Runner, fromAddress, src string, to Runner, toPeer Peer, part string, size int64) (int64, error) {
	n, err := relay(ctx, from, fromAddress, src, to, toPeer, part, size)
	if err != nil {
		return n, fmt.Errorf("relaying %s from %s to %s: %w", src, from, to, err)
	}
	return n, nil
}

func relay(ctx context.Context, from Runner, fromAddress, src string, to Runner, p Peer, part string, size int64) (int64, error) {
	if err := checkRelay(fromAddress, src, p, part); err != nil {
		return 0, err
	}
	if size < 0 {
		return 0, fmt.Errorf("size %d is negative", size)
	}
	k, err := newRelayKey()
	if err != nil {
		return 0, err
	}
	life := relayLife(size)
	line, err := authorizedLine(p, fromAddress, part, k.public, k.id, size, life)
	if err != nil {
		return 0, err
	}
	keep := relaysLive.add(k.id)
	defer relaysLive.remove(k.id)
	m, grantErr := grant(ctx, to, p, part, line, k.id, life, keep)
	var sendErr error
	if grantErr == nil {
		sendErr = send(ctx, from, src, p, k)
	}
	// revoke even after a failed grant, which may have added the line
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
	defer cancel()
	n, revokeErr := revoke(rctx, to, p, part, k.id, m, grantErr == nil && sendErr == nil)
	if revokeErr != nil {
		revokeErr = fmt.Errorf("%w; the line ending %s%s stays in %s until cargoship reset, or a relay to %s an hour from now, drops it", revokeErr, relayMarker, k.id, p.AuthorizedKeys, to)
	}
	return n, errors.Join(grantErr, sendErr, revokeErr)
}

// checkRelay validates what reaches the scripts, the authorized_keys line
// and ssh's command line.
func checkRelay(fromAddress, src string, p Peer, part string) error {
	a, err := netip.ParseAddr(fromAddress)
	if err != nil || a.Zone() != "" {
		return fmt.Errorf("sender address %q is not an IP address (sshd matches from= against the connection's address)", fromAddress)
	}
	for _, q := range []string{src, part, p.AuthorizedKeys} {
		if err := checkPath(q); err != nil {
			return err
		}
	}
	switch {
	case !hostPattern.MatchString(p.Address):
		return fmt.Errorf("peer address %q is not an address", p.Address)
	case p.Port < 1 || p.Port > 65535:
		return fmt.Errorf("peer port %d is out of range", p.Port)
	case !loginPattern.MatchString(p.User):
		return fmt.Errorf("peer user %q is not a login name", p.User)
	case len(p.HostKeys) == 0:
		return errors.New("the peer has no host keys to check")
	}
	return nil
}

// relayKey is one transfer's key pair and id.
type relayKey struct {
	id      string
	public  string // "ssh-ed25519 AAAA..."
	private []byte // OpenSSH PEM; never logged, never in argv
}

func newRelayKey() (relayKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return relayKey{}, fmt.Errorf("generating a relay key: %w", err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return relayKey{}, fmt.Errorf("generating a relay key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return relayKey{}, fmt.Errorf("generating a relay key: %w", err)
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return relayKey{}, fmt.Errorf("generating a relay id: %w", err)
	}
	return relayKey{
		id:      strconv.FormatInt(time.Now().Unix(), 10) + "-" + hex.EncodeToString(id[:]),
		public:  strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))),
		private: pem.EncodeToMemory(block),
	}, nil
}

// relayLife bounds one transfer: ten minutes, and a minute more for every
// 60 MiB (a floor of 1 MiB/s, which a fleet's own network beats by far).
// The key's expiry-time and its forced command's timeout are both this.
func relayLife(size int64) time.Duration {
	return 10*time.Minute + time.Duration(size/(1<<20))*time.Second
}

// relayCommand is a transfer's forced command, run as root: it writes at
// most $5 bytes of stdin to "$1", for at most $4 seconds, and only while
// the grant record "$2" holds the transfer's id $3. The revoke voids the
// record first: a second session the key opened, on a connection that
// outlived its line in authorized_keys, finds it void and writes nothing.
// It is one line: an authorized_keys line cannot carry a line break.
const relayCommand = `[ "$(cat -- "$2" 2>/dev/null)" = "$3" ] || { echo "cargoship relay: the grant for $1 is void" >&2; exit 1; }; exec timeout -s KILL "$4" head -c "$5" > "$1"`

// authorizedLine is the receiver's authorized_keys line for one transfer:
// restrict (no pty, forwarding, agent, X11 or rc), usable from
// fromAddress only, and relayCommand as its forced command. sshd runs the
// command with the login shell's -c; the arguments are quoted for sh, then
// the whole command for authorized_keys. The grant adds the expiry-time,
// which must be in the receiver's own clock and zone.
func authorizedLine(p Peer, fromAddress, part, public, id string, size int64, life time.Duration) (string, error) {
	cmd := "exec " + Script(relayCommand, part, part+RelayGrantSuffix, id, strconv.Itoa(int(life.Seconds())), strconv.FormatInt(size, 10))
	if !p.Root {
		cmd = "exec sudo -n -- " + strings.TrimPrefix(cmd, "exec ")
	}
	q, err := quoteKeysOption(cmd)
	if err != nil {
		return "", fmt.Errorf("part file %q: %w", part, err)
	}
	return fmt.Sprintf(`restrict,from="%s",command=%s %s %s%s`, fromAddress, q, public, relayMarker, id), nil
}

// quoteKeysOption quotes an authorized_keys option value. sshd's
// opt_dequote knows one escape, \" for a quote; a backslash before
// anything else stays as it is. So quotes are escaped and nothing else,
// and what cannot be said that way is refused: a line break ends the
// line, a NUL the string, and a final backslash would escape the closing
// quote.
func quoteKeysOption(s string) (string, error) {
	switch {
	case strings.ContainsAny(s, "\n\r\x00"):
		return "", errors.New("holds a line break or NUL, which an authorized_keys line cannot carry")
	case strings.HasSuffix(s, `\`):
		return "", errors.New(`ends in a backslash, which would escape the option's closing quote`)
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`, nil
}

// relaysLive holds the ids of this process's transfers under way: a
// grant drops every other relay line as a killed run's, and must leave
// these.
var relaysLive = &liveSet{ids: map[string]bool{}}

type liveSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

// add records id and returns every live id, id included.
func (l *liveSet) add(id string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids[id] = true
	out := make([]string, 0, len(l.ids))
	for k := range l.ids {
		out = append(out, k)
	}
	return out
}

func (l *liveSet) remove(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.ids, id)
}

// sendScript writes the key and the receiver's host keys, which come on
// stdin (a base64 line, then known_hosts lines), into a private temporary
// directory, and sends $1 to the receiver with them: the forced command
// there writes it. ssh reads no configuration, offers this key alone,
// never prompts and trusts the listed host keys only. The directory goes
// when the script ends, on a signal too.
const sendScript = `set -e
[ -f "$1" ] || { echo "$1: no such file" >&2; exit 44; }
umask 077
k=$(mktemp -d /tmp/cargoship-relay.XXXXXX)
trap 'rm -rf -- "$k"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
IFS= read -r key
printf '%s\n' "$key" | base64 -d > "$k/id"
key=
cat > "$k/known_hosts"
ssh -F /dev/null -T -i "$k/id" -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes \
	-o StrictHostKeyChecking=yes -o UserKnownHostsFile="$k/known_hosts" -o GlobalKnownHostsFile=/dev/null \
	-o HostKeyAlias=` + relayKnownHost + ` -o CheckHostIP=no -o UpdateHostKeys=no -o ConnectTimeout=10 \
	-o ServerAliveInterval=15 -o ServerAliveCountMax=4 -o LogLevel=ERROR \
	-p "$2" -l "$3" -- "$4" < "$1"`

func send(ctx context.Context, from Runner, src string, p Peer, k relayKey) error {
	key := base64.StdEncoding.EncodeToString(k.private)
	var in strings.Builder
	in.WriteString(key + "\n")
	for _, hk := range p.HostKeys {
		pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(hk))
		if err != nil {
			return fmt.Errorf("peer host key %q: %w", hk, err)
		}
		in.WriteString(relayKnownHost + " " + string(ssh.MarshalAuthorizedKey(pk)))
	}
	_, err := from.Sudo(ctx, Script(sendScript, src, strconv.Itoa(p.Port), p.User, p.Address), WithStdin(strings.NewReader(in.String())), WithRedact(key))
	if err != nil {
		return hostError(ctx, from, "sending", err)
	}
	return nil
}

// hostError names the host and what was being done; a failed command
// reads as what it said, a cancelled one as the cancel, rather than the
// script that ran.
func hostError(ctx context.Context, r Runner, what string, err error) error {
	var ee *ExitError
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	} else if errors.As(err, &ee) {
		err = &commandError{ee}
	}
	return fmt.Errorf("%s: %s: %w", r, what, err)
}
