package host

// Tests of the relay's pure parts and of its authorized_keys editing,
// run through the local sh: no sshd, no root.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

const sshdT = `port 2222
port 2223
addressfamily any
listenaddress 0.0.0.0:2222
permitrootlogin without-password
pubkeyauthentication yes
authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2
hostkey /etc/ssh/ssh_host_rsa_key
hostkey /etc/ssh/ssh_host_ed25519_key
hostkeyalgorithms ssh-ed25519
`

func TestParseSSHDConfig(t *testing.T) {
	c, err := parseSSHDConfig(sshdT)
	if err != nil || c.port != 2222 || c.keysFile != ".ssh/authorized_keys" || c.rootLogin != "without-password" ||
		!slices.Equal(c.hostKeys, []string{"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ed25519_key"}) {
		t.Errorf("parseSSHDConfig = %+v, %v", c, err)
	}
	for _, tc := range []struct{ out, want string }{
		{"", "no port"},
		{"port x\n", `port "x"`},
		{strings.Replace(sshdT, "pubkeyauthentication yes", "pubkeyauthentication no", 1), "PubkeyAuthentication no"},
		{strings.Replace(sshdT, "authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2", "authorizedkeysfile none", 1), "AuthorizedKeysFile none"},
	} {
		if _, err := parseSSHDConfig(tc.out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseSSHDConfig(%q) = %v; want an error saying %q", tc.out, err, tc.want)
		}
	}
}

func TestExpandKeysFile(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{".ssh/authorized_keys", "/home/ann/.ssh/authorized_keys"},
		{"%h/.ssh/keys", "/home/ann/.ssh/keys"},
		{"/etc/ssh/keys/%u", "/etc/ssh/keys/ann"},
		{"/etc/ssh/keys/%U.%%u", "/etc/ssh/keys/1001.%u"},
		{"keys_%u", "/home/ann/keys_ann"},
	} {
		if got, err := expandKeysFile(tc.pattern, "ann", "/home/ann", 1001); got != tc.want || err != nil {
			t.Errorf("expandKeysFile(%q) = %q, %v; want %q", tc.pattern, got, err, tc.want)
		}
	}
	for _, bad := range []string{"/k/%x", "/k/%"} {
		if got, err := expandKeysFile(bad, "ann", "/home/ann", 1001); err == nil {
			t.Errorf("expandKeysFile(%q) = %q; want an error", bad, got)
		}
	}
	if got, err := expandKeysFile(".ssh/k", "ann", "", 1001); err == nil {
		t.Errorf("a relative file without a home: %q", got)
	}
}

func TestParsePeerProbe(t *testing.T) {
	pub := testPublicKey(t)
	out := sshdT + "cargoship-passwd ann:x:1001:1001:Ann,,,:/home/ann:/bin/bash\ncargoship-hostkey " + pub + " root@h\n"
	p, err := parsePeerProbe(out, "ann", "10.0.0.5")
	want := Peer{Address: "10.0.0.5", Port: 2222, User: "ann", AuthorizedKeys: "/home/ann/.ssh/authorized_keys", HostKeys: []string{pub}}
	if err != nil || !peersEqual(p, want) {
		t.Errorf("parsePeerProbe = %+v, %v\nwant %+v", p, err, want)
	}
	rootOut := strings.Replace(out, "ann:x:1001:1001:Ann,,,:/home/ann", "root:x:0:0:root:/root", 1)
	if p, err := parsePeerProbe(rootOut, "root", "10.0.0.5"); err != nil || !p.Root || p.AuthorizedKeys != "/root/.ssh/authorized_keys" {
		t.Errorf("root: %+v, %v", p, err)
	}
	for _, tc := range []struct{ out, want string }{
		{strings.Replace(rootOut, "permitrootlogin without-password", "permitrootlogin no", 1), "PermitRootLogin no"},
		{sshdT + "cargoship-passwd ann:x:1001:1001:Ann,,,:/home/ann:/bin/bash\n", "host keys"},
		{sshdT + "cargoship-hostkey " + pub + "\n", "no passwd entry"},
		{sshdT + "cargoship-passwd ann:x:1001\ncargoship-hostkey " + pub + "\n", "unexpected passwd"},
		{out + "cargoship-hostkey ssh-ed25519 garbage\n", "host key"},
	} {
		if _, err := parsePeerProbe(tc.out, "ann", "10.0.0.5"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parsePeerProbe: %v; want an error saying %q", err, tc.want)
		}
	}
}

func peersEqual(a, b Peer) bool {
	return a.Address == b.Address && a.Port == b.Port && a.User == b.User && a.AuthorizedKeys == b.AuthorizedKeys &&
		slices.Equal(a.HostKeys, b.HostKeys) && a.Root == b.Root
}

func testPublicKey(t *testing.T) string {
	t.Helper()
	k, err := newRelayKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.public
}

// optDequote undoes an authorized_keys option's quoting as OpenSSH's
// opt_dequote (auth-options.c) does: \" is a quote, any other backslash
// stays. It returns the value and what follows the closing quote.
func optDequote(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", "", errors.New("missing start quote")
	}
	var b []byte
	i := 1
	for ; i < len(s) && s[i] != '"'; i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '"' {
			i++
		}
		b = append(b, s[i])
	}
	if i == len(s) {
		return "", "", errors.New("missing end quote")
	}
	return string(b), s[i+1:], nil
}

// advancePastOptions is sshkey_advance_past_options (sshkey.c): where the
// key starts, quotes (with \" inside) protecting blanks.
func advancePastOptions(s string) (int, error) {
	quoted := false
	i := 0
	for ; i < len(s) && (quoted || (s[i] != ' ' && s[i] != '\t')); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '"' {
			i++
		} else if s[i] == '"' {
			quoted = !quoted
		}
	}
	if quoted {
		return 0, errors.New("unterminated quote")
	}
	return i, nil
}

// sshdReads parses a relay's authorized_keys line as sshd would
// (sshauthopt_parse for the options we write) and returns from=,
// command= and the rest of the line (key and comment).
func sshdReads(line string) (from, command, rest string, err error) {
	end, err := advancePastOptions(line)
	if err != nil {
		return "", "", "", err
	}
	opts := line
	restrict := false
	for {
		switch {
		case strings.HasPrefix(opts, "restrict"):
			opts, restrict = opts[len("restrict"):], true
		case strings.HasPrefix(opts, "from="):
			from, opts, err = optDequote(opts[len("from="):])
		case strings.HasPrefix(opts, "command="):
			command, opts, err = optDequote(opts[len("command="):])
		default:
			return "", "", "", errors.New("unknown option at " + opts)
		}
		if err != nil {
			return "", "", "", err
		}
		if opts == "" || opts[0] == ' ' || opts[0] == '\t' {
			break
		}
		if opts[0] != ',' {
			return "", "", "", errors.New("no comma at " + opts)
		}
		opts = opts[1:]
	}
	if len(line)-len(opts) != end {
		return "", "", "", errors.New("the options end where sshd's key search does not")
	}
	if !restrict {
		return "", "", "", errors.New("no restrict")
	}
	return from, command, strings.TrimLeft(opts, " \t"), nil
}

// fakeSudo is a directory holding a sudo that checks it is called as the
// forced command calls it and runs the command as the caller.
func fakeSudo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = -n ] && [ \"$2\" = -- ] || { echo \"sudo called as $*\" >&2; exit 99; }\nshift 2\nexec \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestAuthorizedLineSurvivesSSHDAndSh takes the line apart the way sshd
// does and runs its command through sh, as sshd does with the login
// shell: the part file, whatever its name, gets stdin.
func TestAuthorizedLineSurvivesSSHDAndSh(t *testing.T) {
	k, err := newRelayKey()
	if err != nil {
		t.Fatal(err)
	}
	sudoDir := fakeSudo(t)
	names := []string{`plain`, `it's a "quoted" $HOME name`, `back\slash\" and \\"`, "tab\tand `id` $(id) ;&|*?", `ends in a quote"`, `ends in '`, `-dash`}
	for _, root := range []bool{true, false} {
		for _, name := range names {
			dir := t.TempDir()
			part := filepath.Join(dir, name)
			line, err := authorizedLine(Peer{Root: root}, "10.1.2.3", part, k.public, k.id, 64, time.Minute)
			if err != nil {
				t.Fatalf("authorizedLine(%q): %v", part, err)
			}
			from, command, rest, err := sshdReads(line)
			if err != nil {
				t.Fatalf("sshd would not read %s: %v", line, err)
			}
			pk, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(rest))
			if err != nil || strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) != k.public || comment != relayMarker+k.id {
				t.Errorf("key part %q: %v, comment %q", rest, err, comment)
			}
			if from != "10.1.2.3" {
				t.Errorf("from = %q", from)
			}
			if strings.Contains(command, "sudo") == root {
				t.Errorf("root=%v, command %s", root, command)
			}
			if err := os.WriteFile(part+RelayGrantSuffix, []byte(k.id+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := runForced(command, sudoDir, "payload\x00\n"); err != nil {
				t.Fatalf("sh -c %s: %v: %s", command, err, out)
			}
			got, err := os.ReadFile(part)
			if err != nil || string(got) != "payload\x00\n" {
				t.Errorf("root=%v %q: read %q, %v", root, name, got, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 {
				t.Errorf("root=%v %q: %d files made; want the part and its grant record", root, name, len(entries))
			}
		}
	}
}

// runForced runs a forced command through sh, as sshd does with the login
// shell, with stdin.
func runForced(command, sudoDir, stdin string) ([]byte, error) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env = []string{"PATH=" + sudoDir + ":/usr/bin:/bin", "HOME=/nonexistent"}
	cmd.Stdin = strings.NewReader(stdin)
	return cmd.CombinedOutput()
}

// TestRelayCommandIsBounded: the forced command writes only while its
// grant record holds the transfer's id, and no more than the file's size.
// A sender that kept the key's connection open past the revoke can open
// a session on it still; the revoke voids the record first, so that
// session writes nothing.
func TestRelayCommandIsBounded(t *testing.T) {
	k, err := newRelayKey()
	if err != nil {
		t.Fatal(err)
	}
	sudoDir := fakeSudo(t)
	for _, root := range []bool{true, false} {
		part := filepath.Join(t.TempDir(), "f"+PartSuffix)
		line, err := authorizedLine(Peer{Root: root}, "10.1.2.3", part, k.public, k.id, 4, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		_, command, _, err := sshdReads(line)
		if err != nil {
			t.Fatal(err)
		}
		for name, record := range map[string]string{"no record": "", "void record": "revoked\n", "another transfer's": "1765000000-abcdef\n"} {
			if record != "" {
				if err := os.WriteFile(part+RelayGrantSuffix, []byte(record), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, err := runForced(command, sudoDir, "EVIL")
			if err == nil || !strings.Contains(string(out), "grant") {
				t.Errorf("root=%v, %s: the command ran: %v: %s", root, name, err, out)
			}
			if _, err := os.Stat(part); !os.IsNotExist(err) {
				t.Errorf("root=%v, %s: the part file was opened", root, name)
			}
		}
		if err := os.WriteFile(part+RelayGrantSuffix, []byte(k.id+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := runForced(command, sudoDir, "12345678"); err != nil {
			t.Fatalf("root=%v: %v: %s", root, err, out)
		}
		if got, _ := os.ReadFile(part); string(got) != "1234" {
			t.Errorf("root=%v: the part holds %q; want the 4 bytes granted", root, got)
		}
	}
	if life := relayLife(600 << 20); life != 20*time.Minute {
		t.Errorf("a 600 MiB transfer may take %s; want 20m0s", life)
	}
}

func TestRelayRefusesUnsafeValues(t *testing.T) {
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b", `a\`} {
		if q, err := quoteKeysOption(bad); err == nil {
			t.Errorf("quoteKeysOption(%q) = %s", bad, q)
		}
	}
	good := Peer{Address: "10.0.0.2", Port: 22, User: "root", AuthorizedKeys: "/root/.ssh/authorized_keys", HostKeys: []string{testPublicKey(t)}, Root: true}
	for name, tc := range map[string]struct {
		from, part string
		peer       func(p *Peer)
	}{
		"part with a newline":    {"10.0.0.1", "/var/lib/x\n/y", nil},
		"relative part":          {"10.0.0.1", "x", nil},
		"host name as from":      {"node-1", "/x", nil},
		"from with a zone":       {"fe80::1%eth0", "/x", nil},
		"from with a quote":      {`10.0.0.1"`, "/x", nil},
		"option as peer address": {"10.0.0.1", "/x", func(p *Peer) { p.Address = "-oProxyCommand=x" }},
		"peer address with ,":    {"10.0.0.1", "/x", func(p *Peer) { p.Address = "a,b" }},
		"bad user":               {"10.0.0.1", "/x", func(p *Peer) { p.User = "a b" }},
		"port 0":                 {"10.0.0.1", "/x", func(p *Peer) { p.Port = 0 }},
		"no host keys":           {"10.0.0.1", "/x", func(p *Peer) { p.HostKeys = nil }},
		"relative keys file":     {"10.0.0.1", "/x", func(p *Peer) { p.AuthorizedKeys = ".ssh/authorized_keys" }},
	} {
		p := good
		if tc.peer != nil {
			tc.peer(&p)
		}
		// the refusal comes before either host is asked anything
		n, err := Relay(context.Background(), failRunner{t}, tc.from, "/src", failRunner{t}, p, tc.part, 10)
		if err == nil || n != 0 {
			t.Errorf("%s: Relay = %d, %v; want a refusal", name, n, err)
		}
	}
}

// failRunner fails the test when it is asked to run anything.
type failRunner struct{ t *testing.T }

func (f failRunner) String() string { return "nowhere" }
func (f failRunner) Run(context.Context, string, ...RunOption) (string, error) {
	f.t.Error("a command ran")
	return "", errors.New("no")
}

func (f failRunner) Sudo(context.Context, string, ...RunOption) (string, error) {
	f.t.Error("a command ran")
	return "", errors.New("no")
}

// akRun runs the authorized_keys edit alone, as grant (add set) and
// revoke (drop set) do, on a local file.
func akRun(t *testing.T, ak, add, drop string, keep ...string) {
	t.Helper()
	body := akEdit + `ak=$1 add=$2 drop=$3; shift 3; keep="$*"; cs_aklock; cs_akedit`
	cmd := exec.Command("/bin/sh", append([]string{"-c", body, "sh", ak, add, drop}, keep...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("editing %s: %v: %s", ak, err, out)
	}
}

func TestAuthorizedKeysEditRestoresTheFile(t *testing.T) {
	t.Parallel()
	const a = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA me@laptop"
	const b = `command="echo \"hi\"" ssh-rsa AAAAB3 ops`
	mine := `restrict,from="10.0.0.1",command="exec cat > '/p'" ssh-ed25519 AAAAC3x ` + relayMarker + "aaaa"
	other := `restrict ssh-ed25519 AAAAC3y ` + relayMarker + "bbbb"
	for name, before := range map[string]string{
		"empty":                  "",
		"one line":               a + "\n",
		"no final newline":       a + "\n" + b,
		"blank lines and CRLF":   a + "\r\n\n\n" + b + "\n\n",
		"only a newline":         "\n",
		"one line, no newline":   a,
		"comment, spaces at end": "# keys  \n" + a + "   \n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ak := filepath.Join(t.TempDir(), "authorized_keys")
			if err := os.WriteFile(ak, []byte(before), 0o640); err != nil {
				t.Fatal(err)
			}
			akRun(t, ak, mine, "", "aaaa", "bbbb")
			got, _ := os.ReadFile(ak)
			if !strings.Contains(string(got), "\n"+mine) && !strings.HasPrefix(string(got), mine) || !strings.HasPrefix(string(got), strings.TrimSuffix(before, "\n")) {
				t.Fatalf("after the grant: %q", got)
			}
			// a concurrent transfer's line comes and goes in between
			akRun(t, ak, other, "", "aaaa", "bbbb")
			akRun(t, ak, "", "aaaa")
			akRun(t, ak, "", "bbbb")
			got, _ = os.ReadFile(ak)
			if string(got) != before {
				t.Errorf("after the revoke: %q, want %q", got, before)
			}
			if fi, _ := os.Stat(ak); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640", fi.Mode())
			}
			if left, _ := filepath.Glob(ak + ".cargoship-*"); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestAuthorizedKeysEditDropsStaleLines(t *testing.T) {
	const a = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA me@laptop\n"
	stale := `restrict,from="10.0.0.9",command="exec cat > '/old'" ssh-ed25519 AAAAC3z ` + relayMarker + "dead\n"
	live := `restrict ssh-ed25519 AAAAC3y ` + relayMarker + "bbbb\n"
	ak := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(ak, []byte(a+stale+live+a), 0o600); err != nil {
		t.Fatal(err)
	}
	mine := "restrict ssh-ed25519 AAAAC3x " + relayMarker + "aaaa"
	akRun(t, ak, mine, "", "aaaa", "bbbb")
	got, _ := os.ReadFile(ak)
	if want := a + live + a + mine + "\n"; string(got) != want {
		t.Errorf("after the grant: %q\nwant %q", got, want)
	}
	akRun(t, ak, "", "aaaa")
	got, _ = os.ReadFile(ak)
	if want := a + live + a; string(got) != want {
		t.Errorf("after the revoke: %q\nwant %q", got, want)
	}
}

// TestAuthorizedKeysEditKeepsAnotherRunsYoungLines: a grant drops what a
// killed run left, but not the line of another cargoship's relay under
// way: one granted at or after the cutoff. Lines without a time (an
// earlier cargoship's) count as old.
func TestAuthorizedKeysEditKeepsAnotherRunsYoungLines(t *testing.T) {
	const a = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA me@laptop\n"
	line := func(id string) string { return "restrict ssh-ed25519 AAAAC3y " + relayMarker + id + "\n" }
	young, atCutoff := line("1765000000-aaaa"), line("1764996400-bbbb")
	old, untimed := line("1764996399-cccc"), line("0123456789abcdef01234567")
	ak := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(ak, []byte(a+young+old+atCutoff+untimed), 0o600); err != nil {
		t.Fatal(err)
	}
	mine := "restrict ssh-ed25519 AAAAC3x " + relayMarker + "1765000001-dddd"
	body := akEdit + `ak=$1 add=$2 drop= keep=$3; cs_aklock; cs_akedit`
	cmd := exec.Command("/bin/sh", "-c", body, "sh", ak, mine, "1765000001-dddd")
	cmd.Env = append(os.Environ(), "cutoff=1764996400")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("editing %s: %v: %s", ak, err, out)
	}
	got, _ := os.ReadFile(ak)
	if want := a + young + atCutoff + mine + "\n"; string(got) != want {
		t.Errorf("after the grant: %q\nwant %q", got, want)
	}
}

// TestRelayIDsCarryTheirTime: the id a grant compares with its cutoff.
func TestRelayIDsCarryTheirTime(t *testing.T) {
	before := time.Now().Unix()
	k, err := newRelayKey()
	if err != nil {
		t.Fatal(err)
	}
	sec, hexPart, ok := strings.Cut(k.id, "-")
	n, perr := strconv.ParseInt(sec, 10, 64)
	if !ok || perr != nil || n < before || n > time.Now().Unix() || len(hexPart) != 24 {
		t.Errorf("id %q; want UNIXSECONDS-<24 hex> of now", k.id)
	}
}
