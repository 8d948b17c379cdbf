package host

// Relays through the fixture's sshd: this machine is sender and receiver
// at once, the sender's address 127.0.0.1.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	osuser "os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// relayConfig is the fixture sshd's configuration file: ReadPeer reads
// sshd's default one, the fixture runs with its own.
func (f *fixture) relayConfig() string { return filepath.Join(f.dir, "sshd_config") }

// authorizedKeys is the file the fixture's sshd reads every user's keys
// from.
func (f *fixture) authorizedKeys() string { return filepath.Join(f.dir, "authorized_keys") }

// relayPeer connects to this machine as user and reads it as a peer.
func (f *fixture) relayPeer(t *testing.T, user string) (Runner, Peer) {
	t.Helper()
	to := connect(t, f.sshHost(user), f.opts(nil, nil))
	p, err := readPeer(context.Background(), to, user, "127.0.0.1", f.relayConfig())
	if err != nil {
		t.Fatalf("readPeer: %v", err)
	}
	return to, p
}

// keepKeys restores the fixture's authorized_keys when the test ends,
// and returns its content now.
func (f *fixture) keepKeys(t *testing.T) []byte {
	t.Helper()
	orig, err := os.ReadFile(f.authorizedKeys())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.writeKeys(orig); err != nil {
			t.Errorf("restoring %s: %v", f.authorizedKeys(), err)
		}
	})
	return orig
}

// writeKeys replaces authorized_keys by a rename, as the relay's own edit
// does: the parallel tests log in with it meanwhile, and a file rewritten
// in place is empty for a moment.
func (f *fixture) writeKeys(content []byte) error {
	tmp := f.authorizedKeys() + ".test"
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, f.authorizedKeys())
}

// relayMu gives the tests that relay their turn one at a time: each
// checks authorized_keys byte for byte, the sender's /tmp and the
// process's count of live relays.
var relayMu sync.Mutex

// relayTurn waits for the relays' turn and keeps it for the rest of the
// test; the tests that do not relay go on beside it.
func relayTurn(t *testing.T) {
	t.Helper()
	relayMu.Lock()
	t.Cleanup(relayMu.Unlock)
}

func sameBytes(t *testing.T, file string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(file)
	if err != nil || string(got) != string(want) {
		t.Errorf("%s is now\n%q\nwant\n%q (%v)", file, got, want, err)
	}
}

// senderKeysGone checks no relay key directory is left in /tmp: the
// sender's trap removed it. A killed command's cleanup may lag its
// return, so it waits a little.
func senderKeysGone(t *testing.T, before []string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		now, _ := filepath.Glob("/tmp/cargoship-relay.*")
		left = slices.DeleteFunc(now, func(d string) bool { return slices.Contains(before, d) })
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) != 0 {
		t.Errorf("the sender kept key directories: %v", left)
	}
	if n := len(relaysLive.add("check")); n != 1 {
		t.Errorf("%d relays still counted live", n-1)
	}
	relaysLive.remove("check")
}

func relayDirs() []string {
	d, _ := filepath.Glob("/tmp/cargoship-relay.*")
	return d
}

func TestReadPeer_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	for _, user := range []string{"root", userNoPW} {
		_, p := f.relayPeer(t, user)
		want := Peer{Address: "127.0.0.1", Port: f.port, User: user, AuthorizedKeys: f.authorizedKeys(),
			HostKeys: []string{strings.TrimSpace(string(ssh.MarshalAuthorizedKey(f.hostKey)))}, Root: user == "root"}
		if !peersEqual(p, want) {
			t.Errorf("%s: ReadPeer = %+v\nwant %+v", user, p, want)
		}
	}

	// tokens, a Match block and a host key with its .pub beside it
	dir := t.TempDir()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "")
	signer, _ := ssh.NewSignerFromKey(priv)
	hk := filepath.Join(dir, "hk")
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	if err := os.WriteFile(hk, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hk+".pub", []byte(pub+" root@elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "sshd_config")
	conf := "Port 2022\nHostKey " + hk + "\nHostKey " + filepath.Join(f.dir, "host_ed25519") +
		"\nAuthorizedKeysFile .ssh/k_%u_%U_%% /second\nMatch User " + userNoPW + "\n\tAuthorizedKeysFile /etc/cargoship-keys/%u\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	r := connect(t, localHost(), f.opts(nil, nil))
	p, err := readPeer(context.Background(), r, "root", "10.9.8.7", cfg)
	wantKeys := []string{pub, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(f.hostKey)))}
	if err != nil || p.Port != 2022 || p.AuthorizedKeys != "/root/.ssh/k_root_0_%" || !p.Root || !slices.Equal(p.HostKeys, wantKeys) || p.Address != "10.9.8.7" {
		t.Errorf("root under tokens: %+v, %v", p, err)
	}
	if p, err := readPeer(context.Background(), r, userNoPW, "10.9.8.7", cfg); err != nil || p.AuthorizedKeys != "/etc/cargoship-keys/"+userNoPW || p.Root {
		t.Errorf("%s under a Match block: %+v, %v", userNoPW, p, err)
	}
	if _, err := readPeer(context.Background(), r, "cargoship-no-such-user", "10.9.8.7", cfg); err == nil || !strings.Contains(err.Error(), "no user") {
		t.Errorf("a user the host lacks: %v", err)
	}
}

// TestRelay_Root: the bytes arrive through the receiver's sshd, into a
// part file whose name is full of shell and authorized_keys syntax; it is
// root's and 0600; authorized_keys is as it was; the sender keeps no key.
func TestRelay_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	ctx := context.Background()
	const size = 3<<20 + 17
	src, _ := testData(t, size)
	log := &syncBuffer{}
	from := connect(t, f.sshHost(userNoPW), f.opts(log, nil))
	before := f.keepKeys(t)
	dirs := relayDirs()
	t.Cleanup(func() {
		// the private key went on stdin: no trace of it in the sender's
		// log, which shows the command lines
		if !strings.Contains(log.String(), "cargoship-relay.XXXXXX") {
			t.Errorf("the sender's log shows no relay command:\n%s", log)
		}
		for _, secret := range []string{"PRIVATE KEY", "LS0tLS1CRUdJTiBPUEVOU1NI", "b3BlbnNzaC1rZXktdjE"} {
			if strings.Contains(log.String(), secret) {
				t.Errorf("the sender's log holds %q", secret)
			}
		}
	})
	for _, user := range []string{"root", userNoPW} {
		t.Run(user, func(t *testing.T) {
			to, p := f.relayPeer(t, user)
			part := filepath.Join(t.TempDir(), `it's a "relay" $HOME \ dir`, "engine"+PartSuffix)
			n, err := Relay(ctx, from, "127.0.0.1", src, to, p, part, size)
			if err != nil || n != size {
				t.Fatalf("Relay = %d, %v; want %d bytes", n, err, size)
			}
			sameFile(t, src, part)
			fi, err := os.Stat(part)
			if err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
				t.Errorf("part file: %v, %v; want root's 0600", fi.Mode(), err)
			}
			sameBytes(t, f.authorizedKeys(), before)
			senderKeysGone(t, dirs)

			// a second relay into the same part starts it afresh
			other, _ := testData(t, 1000)
			if n, err := Relay(ctx, from, "127.0.0.1", other, to, p, part, 1000); err != nil || n != 1000 {
				t.Fatalf("second Relay = %d, %v", n, err)
			}
			sameFile(t, other, part)
			sameBytes(t, f.authorizedKeys(), before)
		})
	}
}

// TestRelayDropsStaleLines_Root: a line a killed relay left is dropped;
// every other byte stays, a missing final newline too.
func TestRelayDropsStaleLines_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	ctx := context.Background()
	src, _ := testData(t, 4096)
	from := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	orig := f.keepKeys(t)
	to, p := f.relayPeer(t, "root")
	stale := `restrict,from="10.0.0.9",command="exec cat > '/x'" ` + testPublicKey(t) + " " + relayMarker + "0123456789abcdef01234567\n"
	for name, tc := range map[string]struct{ before, after string }{
		"stale line":       {string(orig) + stale, string(orig)},
		"no final newline": {string(orig) + "# no newline at the end", string(orig) + "# no newline at the end"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := f.writeKeys([]byte(tc.before)); err != nil {
				t.Fatal(err)
			}
			part := filepath.Join(t.TempDir(), "f"+PartSuffix)
			if n, err := Relay(ctx, from, "127.0.0.1", src, to, p, part, 4096); err != nil || n != 4096 {
				t.Fatalf("Relay = %d, %v", n, err)
			}
			sameFile(t, src, part)
			sameBytes(t, f.authorizedKeys(), []byte(tc.after))
		})
	}
}

// TestRelayRefusals_Root: a key used from another address than the one
// it was granted to (from=), a peer whose port is closed, and host keys
// that are not the receiver's all fail, write nothing and leave
// authorized_keys as it was.
func TestRelayRefusals_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	ctx := context.Background()
	src, _ := testData(t, 4096)
	from := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	before := f.keepKeys(t)
	dirs := relayDirs()
	to, good := f.relayPeer(t, "root")
	closed, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		fromAddress string
		peer        func(p *Peer)
		want        string
	}{
		"key used from elsewhere": {"127.0.0.2", nil, "Permission denied"},
		"closed port":             {"127.0.0.1", func(p *Peer) { p.Port = closed }, "refused"},
		"wrong host key":          {"127.0.0.1", func(p *Peer) { p.HostKeys = []string{testPublicKey(t)} }, "verification failed"},
	} {
		t.Run(name, func(t *testing.T) {
			p := good
			if tc.peer != nil {
				tc.peer(&p)
			}
			part := filepath.Join(t.TempDir(), "f"+PartSuffix)
			n, err := Relay(ctx, from, tc.fromAddress, src, to, p, part, 4096)
			if err == nil || n != 0 || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), from.String()) {
				t.Fatalf("Relay = %d, %v; want a failure saying %q", n, err, tc.want)
			}
			t.Logf("the error: %v", err)
			if _, err := os.Stat(part); !os.IsNotExist(err) {
				t.Errorf("the part file is there after a failed relay: %v", err)
			}
			sameBytes(t, f.authorizedKeys(), before)
			senderKeysGone(t, dirs)
		})
	}
}

// TestRelayRemovesTheKeysFileItMade_Root: a user without an
// authorized_keys file gets one, in a 0700 directory, both the user's;
// the revoke removes both again.
func TestRelayRemovesTheKeysFileItMade_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	ctx := context.Background()
	src, _ := testData(t, 100)
	from := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	to, p := f.relayPeer(t, userNoPW)
	home := userHome(t, userNoPW)
	p.AuthorizedKeys = filepath.Join(home, ".ssh", "authorized_keys")
	closed, _ := freePort()
	p.Port = closed
	// watch the grant's file while the relay runs
	seen := make(chan os.FileInfo, 1)
	stop := make(chan struct{})
	go func() {
		defer close(seen)
		for {
			fi, err1 := os.Stat(p.AuthorizedKeys)
			dir, err2 := os.Stat(filepath.Dir(p.AuthorizedKeys))
			if err1 == nil && err2 == nil && fi.Mode().Perm() == 0o600 && dir.Mode().Perm() == 0o700 &&
				fi.Sys().(*syscall.Stat_t).Uid != 0 && dir.Sys().(*syscall.Stat_t).Uid != 0 {
				seen <- fi
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	_, err := Relay(ctx, from, "127.0.0.1", src, to, p, filepath.Join(t.TempDir(), "f"), 100)
	close(stop)
	if err == nil {
		t.Fatal("a relay to a closed port succeeded")
	}
	if fi := <-seen; fi == nil {
		t.Error("the grant made no authorized_keys of the user's, 0600 in a 0700 directory")
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh")); !os.IsNotExist(err) {
		t.Errorf("the directory the grant made is still there: %v", err)
	}
}

// TestRelayRevokesOnCancel_Root: cancelling a relay under way, while the
// key is being authorized or while the bytes flow, still removes the key,
// and the sender's copy of it.
func TestRelayRevokesOnCancel_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	src, _ := testData(t, 64<<20)
	from := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	before := f.keepKeys(t)
	dirs := relayDirs()
	to, p := f.relayPeer(t, "root")
	for name, when := range map[string]func(part string) bool{
		"granting": func(string) bool {
			b, _ := os.ReadFile(f.authorizedKeys())
			return strings.Contains(string(b), relayMarker)
		},
		"sending": func(part string) bool {
			fi, err := os.Stat(part)
			return err == nil && fi.Size() > 0
		},
	} {
		t.Run(name, func(t *testing.T) {
			part := filepath.Join(t.TempDir(), "f"+PartSuffix)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !when(part); time.Sleep(time.Millisecond) {
				}
				cancel()
			}()
			n, err := Relay(ctx, from, "127.0.0.1", src, to, p, part, 64<<20)
			if err == nil || !strings.Contains(err.Error(), "context canceled") {
				t.Fatalf("a cancelled relay: %d bytes, %v", n, err)
			}
			t.Logf("the error: %v, %d bytes", err, n)
			sameBytes(t, f.authorizedKeys(), before)
			senderKeysGone(t, dirs)
		})
	}
}

// userHome is a home directory of user's, as homes are: the grant edits
// what is in it as that user.
func userHome(t *testing.T, user string) string {
	t.Helper()
	home := t.TempDir()
	// t.TempDir's parent is root's 0700: let the user through
	for _, d := range []string{filepath.Dir(home), home} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	uid, gid := lookupIDs(t, user)
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	return home
}

func lookupIDs(t *testing.T, name string) (int, int) {
	t.Helper()
	u, err := osuser.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// TestRelayEditsAUsersKeysAsTheUser_Root (issue 39, item 4): a login
// user's authorized_keys that is a link to a file only root may write is
// edited with the user's rights, so the grant fails and the file it
// points to is never touched; root used to follow the link and rewrite,
// chown and chmod whatever it named.
func TestRelayEditsAUsersKeysAsTheUser_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	src, _ := testData(t, 100)
	from := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	to, p := f.relayPeer(t, userNoPW)
	home := userHome(t, userNoPW)
	uid, gid := lookupIDs(t, userNoPW)
	ssh := filepath.Join(home, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ssh, uid, gid); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(target, []byte("root's own\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.AuthorizedKeys = filepath.Join(ssh, "authorized_keys")
	if err := os.Symlink(target, p.AuthorizedKeys); err != nil {
		t.Fatal(err)
	}
	closed, _ := freePort()
	p.Port = closed
	_, err := Relay(context.Background(), from, "127.0.0.1", src, to, p, filepath.Join(t.TempDir(), "f"), 100)
	if err == nil || !strings.Contains(err.Error(), "authorizing the relay key") {
		t.Fatalf("a relay through a link to root's file: %v; want the grant refused", err)
	}
	t.Logf("the error: %v", err)
	sameBytes(t, target, []byte("root's own\n"))
	fi, err := os.Stat(target)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("the link's target: %v, %v; want root's 0600 still", fi.Mode(), err)
	}
}
