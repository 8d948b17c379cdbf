package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func TestConnectEachMode(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	conns := map[string]*Conn{
		"ssh":       connect(t, f.sshHost("root"), f.opts(nil, nil)),
		"openSSH":   connect(t, f.openSSHHost("root"), f.opts(nil, nil)),
		"localhost": connect(t, localHost(), f.opts(nil, nil)),
	}
	for name, c := range conns {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := c.Run(context.Background(), "echo hello; echo noise >&2; id -un")
			if err != nil {
				t.Fatal(err)
			}
			if out != "hello\nroot\n" {
				t.Errorf("stdout = %q, want hello and root", out)
			}
			if mode, err := c.SudoMode(); mode != SudoRoot || err != nil {
				t.Errorf("SudoMode = %s, %v; want root", mode, err)
			}
		})
	}
}

func TestSSHWrongKeyFailsAtOnce(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	h := f.sshHost(userNoPW)
	h.SSH.KeyPath = f.otherKey
	var log syncBuffer
	o := f.opts(&log, nil)
	o.Timeout = time.Minute
	_, err := Connect(context.Background(), h, o)
	if err == nil {
		t.Fatal("Connect with a key sshd does not accept succeeded")
	}
	for _, want := range []string{"127.0.0.1", "refused the login", f.otherKey} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(log.String(), "retrying") {
		t.Errorf("an auth failure was retried:\n%s", log.String())
	}
}

func TestSSHEncryptedKey(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	h := f.sshHost(userNoPW)
	h.SSH.KeyPath = f.encKey
	_, err := Connect(context.Background(), h, f.opts(nil, nil))
	if err == nil || !strings.Contains(err.Error(), "is encrypted") || !strings.Contains(err.Error(), "ssh-add") {
		t.Fatalf("Connect with an encrypted key: %v; want an error saying to ssh-add it", err)
	}
	// with the key in the agent, the same keyPath works
	sock := serveAgent(t, f.encSigner)
	c := connect(t, h, f.opts(nil, map[string]string{"SSH_AUTH_SOCK": sock}))
	if _, err := c.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
}

// serveAgent runs an in-process ssh-agent holding the signers' keys and
// returns its socket.
func serveAgent(t *testing.T, keys ...ssh.Signer) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ring := agent.NewKeyring()
	for _, s := range keys {
		priv := privateKeys[string(s.PublicKey().Marshal())]
		if err := ring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(ring, c) }()
		}
	}()
	return sock
}

func TestSSHAgentAndDefaultKeys(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	h := f.sshHost(userNoPW)
	h.SSH.KeyPath = ""
	home := t.TempDir()

	_, err := Connect(context.Background(), h, f.opts(nil, map[string]string{"HOME": home}))
	if err == nil || !strings.Contains(err.Error(), "no SSH key") {
		t.Fatalf("Connect with no key anywhere: %v; want a 'no SSH key' error", err)
	}

	sock := serveAgent(t, f.signer)
	c := connect(t, h, f.opts(nil, map[string]string{"HOME": home, "SSH_AUTH_SOCK": sock}))
	if out, err := c.Run(context.Background(), "id -un"); err != nil || out != userNoPW+"\n" {
		t.Fatalf("agent login: %q, %v", out, err)
	}

	key, err := os.ReadFile(f.key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	c = connect(t, h, f.opts(nil, map[string]string{"HOME": home}))
	if _, err := c.Run(context.Background(), "true"); err != nil {
		t.Fatalf("default key login: %v", err)
	}
}

func TestSSHUnknownHostKey(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	empty := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(empty, []byte("# nobody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{empty, filepath.Join(t.TempDir(), "missing")} {
		o := f.opts(nil, nil)
		o.KnownHostsPath = file
		_, err := Connect(context.Background(), f.sshHost(userNoPW), o)
		var hk *HostKeyError
		if !errors.As(err, &hk) || hk.Kind != "unknown" {
			t.Fatalf("Connect with %s: %v; want an unknown host key error", file, err)
		}
		for _, want := range []string{"unknown host key for 127.0.0.1", "ssh-keyscan -p", file, `SSH_KNOWN_HOSTS=""`, ssh.FingerprintSHA256(f.hostKey)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	}
}

func TestSSHHostKeyMismatch(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	other := ssh.MarshalAuthorizedKey(f.signer.PublicKey()) // any key but the host's
	content := "# first line\n[127.0.0.1]:" + portString(f) + " " + string(other)
	if err := os.WriteFile(kh, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	o := f.opts(&log, nil)
	o.KnownHostsPath = kh
	_, err := Connect(context.Background(), f.sshHost(userNoPW), o)
	var hk *HostKeyError
	if !errors.As(err, &hk) || hk.Kind != "mismatch" {
		t.Fatalf("Connect: %v; want a host key mismatch", err)
	}
	want := "remove the line 2 of " + kh + " or fix hostKey"
	if !strings.Contains(err.Error(), "host key mismatch for 127.0.0.1") || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if strings.Contains(log.String(), "retrying") {
		t.Errorf("a host key mismatch was retried")
	}
}

func portString(f *fixture) string { _, p, _ := net.SplitHostPort(f.addr()); return p }

func TestSSHKnownHostsOff(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	o := f.opts(nil, map[string]string{"SSH_KNOWN_HOSTS": ""})
	o.KnownHostsPath = "" // resolve from the environment
	c := connect(t, f.sshHost(userNoPW), o)
	if _, err := c.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
}

func TestSSHHostKeyPin(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	o := f.opts(nil, nil)
	o.KnownHostsPath = filepath.Join(t.TempDir(), "missing") // the pin must not need it
	for _, pin := range []string{string(ssh.MarshalAuthorizedKey(f.hostKey)), ssh.FingerprintSHA256(f.hostKey)} {
		h := f.sshHost(userNoPW)
		h.SSH.HostKey = pin
		connect(t, h, o)
	}
	wrong := f.sshHost(userNoPW)
	wrong.SSH.HostKey = ssh.FingerprintSHA256(f.signer.PublicKey())
	_, err := Connect(context.Background(), wrong, o)
	if err == nil || !strings.Contains(err.Error(), "hostKey pins "+ssh.FingerprintSHA256(f.signer.PublicKey())) {
		t.Errorf("wrong pin: %v", err)
	}
	bad := f.sshHost(userNoPW)
	bad.SSH.HostKey = "not-a-key"
	_, err = Connect(context.Background(), bad, o)
	if err == nil || !strings.Contains(err.Error(), "hostKey") {
		t.Errorf("malformed pin: %v", err)
	}
}

func TestSSHBastion(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	jump := &v1alpha1.SSH{Address: "127.0.0.1", Port: f.port, User: userNoPW, KeyPath: f.key}
	h := f.sshHost(userNoPW)
	h.SSH.Bastion = jump
	c := connect(t, h, f.opts(nil, nil))
	if out, err := c.Run(context.Background(), "id -un"); err != nil || out != userNoPW+"\n" {
		t.Fatalf("through the bastion: %q, %v", out, err)
	}

	nested := f.sshHost(userNoPW)
	nested.SSH.Bastion = &v1alpha1.SSH{Address: "127.0.0.1", Port: f.port, User: userNoSudo, KeyPath: f.key, Bastion: jump}
	connect(t, nested, f.opts(nil, nil))

	// sshd permits forwarding to its own port only: a target on another
	// port fails through the bastion, although this process could reach
	// it directly, so the connection above did go through the bastion
	proxy := forward(t, f.addr())
	o := f.opts(nil, map[string]string{"SSH_KNOWN_HOSTS": ""})
	o.KnownHostsPath = ""
	direct := f.sshHost(userNoPW)
	direct.SSH.Port = proxy.port
	connect(t, direct, o)
	before := proxy.count()
	viaJump := f.sshHost(userNoPW)
	viaJump.SSH.Port = proxy.port
	viaJump.SSH.Bastion = jump
	var log syncBuffer
	o = f.opts(&log, map[string]string{"SSH_KNOWN_HOSTS": ""})
	o.KnownHostsPath = ""
	_, err := Connect(context.Background(), viaJump, o)
	if err == nil || !strings.Contains(err.Error(), "the bastion will not connect") {
		t.Fatalf("through the bastion to a forbidden port: %v; want the bastion's refusal", err)
	}
	if strings.Contains(log.String(), "retrying") {
		t.Errorf("the bastion's refusal was retried")
	}
	if n := proxy.count() - before; n != 0 {
		t.Errorf("the connection went around the bastion (%d direct connections)", n)
	}
}

// tcpForward is a listener that forwards every connection to one address.
type tcpForward struct {
	port int
	n    chan struct{}
}

func (p *tcpForward) count() int { return len(p.n) }

func forward(t *testing.T, to string) *tcpForward {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &tcpForward{port: l.Addr().(*net.TCPAddr).Port, n: make(chan struct{}, 1000)}
	go serveForward(l, to, p.n)
	return p
}

func serveForward(l net.Listener, to string, n chan struct{}) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		n <- struct{}{}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", to)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = copyAndClose(up, c) }()
			_, _ = copyAndClose(c, up)
		}()
	}
}

func TestSSHRetriesUntilTheHostAnswers(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	h := f.sshHost(userNoPW)
	h.SSH.Port = port
	var log syncBuffer
	o := f.opts(&log, map[string]string{"SSH_KNOWN_HOSTS": ""})
	o.KnownHostsPath = ""
	// the "host" starts listening only after the first attempts failed
	ready := make(chan net.Listener, 1)
	go func() {
		for !strings.Contains(log.String(), "retrying") {
			time.Sleep(20 * time.Millisecond)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", itoa(port)))
		if err != nil {
			ready <- nil
			return
		}
		ready <- l
		serveForward(l, f.addr(), make(chan struct{}, 100))
	}()
	c := connect(t, h, o)
	if l := <-ready; l != nil {
		defer l.Close()
	} else {
		t.Fatal("could not listen on the reserved port")
	}
	if _, err := c.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
}

func TestOpenSSHOptions(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	h := f.openSSHHost(userNoPW)
	h.OpenSSH.Options = map[string]any{"Compression": true, "ConnectionAttempts": 2, "ServerAliveInterval": float64(10)}
	c := connect(t, h, f.opts(nil, nil))
	if out, err := c.Run(context.Background(), "id -un"); err != nil || out != userNoPW+"\n" {
		t.Fatalf("openSSH: %q, %v", out, err)
	}
	tr := c.t.(*openSSHTransport)
	socks, _ := filepath.Glob(filepath.Join(tr.ctlDir, "*"))
	if len(socks) != 1 {
		t.Errorf("want one control socket in %s, found %v", tr.ctlDir, socks)
	}

	h.OpenSSH.DisableMultiplexing = true
	c2 := connect(t, h, f.opts(nil, nil))
	if c2.t.(*openSSHTransport).ctlDir != "" {
		t.Error("disableMultiplexing still made a control directory")
	}

	// configPath: an ssh_config alias supplies address, port, user and key
	cfg := filepath.Join(t.TempDir(), "ssh_config")
	alias := "Host fleet-alias\n  HostName 127.0.0.1\n  Port " + portString(f) + "\n  User " + userNoSudo +
		"\n  IdentityFile " + f.key + "\n  HostKeyAlias [127.0.0.1]:" + portString(f) + "\n"
	if err := os.WriteFile(cfg, []byte(alias), 0o600); err != nil {
		t.Fatal(err)
	}
	viaConfig := &v1alpha1.Host{Role: v1alpha1.RoleWorker, OpenSSH: &v1alpha1.OpenSSH{Address: "fleet-alias", ConfigPath: cfg}}
	c3 := connect(t, viaConfig, f.opts(nil, nil))
	if out, err := c3.Run(context.Background(), "id -un"); err != nil || out != userNoSudo+"\n" {
		t.Errorf("openSSH through configPath: %q, %v", out, err)
	}

	bad := f.openSSHHost(userNoPW)
	bad.OpenSSH.Options = map[string]any{"Bad Name": "x"}
	if _, err := Connect(context.Background(), bad, f.opts(nil, nil)); err == nil || !strings.Contains(err.Error(), "openSSH.options") {
		t.Errorf("bad option name: %v", err)
	}
	unknown := f.openSSHHost(userNoPW)
	o := f.opts(nil, nil)
	o.KnownHostsPath = filepath.Join(t.TempDir(), "missing")
	if _, err := Connect(context.Background(), unknown, o); err == nil || !strings.Contains(err.Error(), "Host key verification failed") {
		t.Errorf("openSSH with an unknown host key: %v", err)
	}
}

func TestOpenSSHCloseStopsMaster(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	c, err := Connect(context.Background(), f.openSSHHost(userNoPW), f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	dir := c.t.(*openSSHTransport).ctlDir
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("control directory %s left behind: %v", dir, err)
	}
}

func TestConnectBadHost(t *testing.T) {
	t.Parallel()
	for _, h := range []*v1alpha1.Host{{Role: "worker"}, {Role: "worker", Localhost: &v1alpha1.Localhost{}}} {
		if _, err := Connect(context.Background(), h, ConnectOptions{}); err == nil {
			t.Errorf("Connect(%+v) succeeded", h)
		}
	}
}

// TestConnectSaysWhatEndedIt: a host that refuses connections, given up
// on at the caller's deadline long before the connect timeout, or at the
// connect timeout; the message names the one that ended it, with the
// host's own answer.
func TestConnectSaysWhatEndedIt(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]*v1alpha1.Host{"ssh": f.sshHost(userNoPW), "openSSH": f.openSSHHost(userNoPW)} {
		if h.SSH != nil {
			h.SSH.Port = port
		} else {
			h.OpenSSH.Port = port
		}
		t.Run(name+", deadline", func(t *testing.T) {
			t.Parallel()
			o := f.opts(nil, nil) // a 20s connect timeout
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := Connect(ctx, h, o)
			msg := fmt.Sprint(err)
			if !regexp.MustCompile(`^host 127\.0\.0\.1: gave up connecting after 2(\.\d)?s, when its deadline passed \(\d+ attempts; the last: .*(?i:connection refused)`).MatchString(msg) ||
				!errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "20s") {
				t.Errorf("Connect = %s; want the deadline's 2s and the refusal", msg)
			}
		})
		t.Run(name+", connect timeout", func(t *testing.T) {
			t.Parallel()
			o := f.opts(nil, nil)
			o.Timeout = 2 * time.Second
			_, err := Connect(context.Background(), h, o)
			msg := fmt.Sprint(err)
			if !regexp.MustCompile(`^host 127\.0\.0\.1: gave up connecting after \d+(\.\d)?s, the connect timeout being 2s \(\d+ attempts\): .*(?i:connection refused)`).MatchString(msg) {
				t.Errorf("Connect = %s; want the connect timeout and the refusal", msg)
			}
		})
	}
}
