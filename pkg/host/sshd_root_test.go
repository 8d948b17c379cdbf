package host

// The tests in *_root_test.go need root: they start a real sshd on
// 127.0.0.1, add local users (see testusers_root_test.go), and remove them
// again.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// fixture is one sshd and the keys and users the tests log in with.
type fixture struct {
	dir        string
	port       int
	hostKey    ssh.PublicKey
	key        string // authorized private key file
	signer     ssh.Signer
	otherKey   string // a key sshd does not accept
	encKey     string // an authorized key with passphrase "secret-pass"
	encSigner  ssh.Signer
	knownHosts string // lists the sshd's real key
	password   string // cstest-pw's login and sudo password
	sshd       *exec.Cmd
	usersMade  bool
}

var (
	fxOnce sync.Once
	fx     *fixture
	fxErr  error
)

func TestMain(m *testing.M) {
	widenParallel()
	shortenWaits()
	code := m.Run()
	if fx != nil {
		fx.cleanup()
	}
	os.Exit(code)
}

// sshd returns the shared fixture, starting it on first use.
func sshd(t testing.TB) *fixture {
	t.Helper()
	if os.Geteuid() != 0 {
		// `go test ./pkg/...` is the no-root unit run; CI runs this as root
		t.Skip("needs root to add users and start sshd: sudo go test ./pkg/host")
	}
	fxOnce.Do(func() {
		fx = &fixture{}
		fxErr = fx.start()
	})
	if fxErr != nil {
		t.Fatalf("test sshd: %v", fxErr)
	}
	return fx
}

func (f *fixture) start() error {
	for _, bin := range []string{"/usr/sbin/sshd", "/usr/bin/sudo", "/usr/bin/ssh", "/usr/lib/openssh/sftp-server"} {
		if _, err := os.Stat(bin); err != nil {
			out, err := exec.Command("apt-get", "install", "-y", "openssh-server", "openssh-client", "openssh-sftp-server", "sudo").CombinedOutput()
			if err != nil {
				return fmt.Errorf("installing openssh-server and sudo: %w: %s", err, out)
			}
			break
		}
	}
	var err error
	sweepDirs()
	if f.dir, err = os.MkdirTemp("", sshdDirPrefix+strconv.Itoa(os.Getpid())+"-"); err != nil {
		return err
	}
	// the users read authorized_keys from here
	if err := os.Chmod(f.dir, 0o755); err != nil {
		return err
	}
	hostSigner, hostKeyFile, err := f.newKey("host_ed25519", "")
	if err != nil {
		return err
	}
	f.hostKey = hostSigner.PublicKey()
	if f.signer, f.key, err = f.newKey("client", ""); err != nil {
		return err
	}
	if _, f.otherKey, err = f.newKey("other", ""); err != nil {
		return err
	}
	if f.encSigner, f.encKey, err = f.newKey("encrypted", "secret-pass"); err != nil {
		return err
	}
	auth := append(ssh.MarshalAuthorizedKey(f.signer.PublicKey()), ssh.MarshalAuthorizedKey(f.encSigner.PublicKey())...)
	if err := os.WriteFile(filepath.Join(f.dir, "authorized_keys"), auth, 0o644); err != nil {
		return err
	}
	if err := f.makeUsers(); err != nil {
		return err
	}
	if f.port, err = freePort(); err != nil {
		return err
	}
	f.knownHosts = filepath.Join(f.dir, "known_hosts")
	line := fmt.Sprintf("[127.0.0.1]:%d %s", f.port, ssh.MarshalAuthorizedKey(f.hostKey))
	if err := os.WriteFile(f.knownHosts, []byte(line), 0o644); err != nil {
		return err
	}
	return f.startSSHD(hostKeyFile)
}

// newKey writes a fresh ed25519 private key (encrypted when passphrase is
// set) and returns its signer and path.
func (f *fixture) newKey(name, passphrase string) (ssh.Signer, string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, name)
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, name, []byte(passphrase))
	}
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, "", err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err == nil {
		privateKeys[string(signer.PublicKey().Marshal())] = priv
	}
	return signer, path, err
}

// privateKeys finds a test key by its public half, for the test agent.
var privateKeys = map[string]ed25519.PrivateKey{}

// sshdDirPrefix names a run's fixture directory; the run's pid follows.
const sshdDirPrefix = "cargoship-sshd-"

// sweepDirs removes fixture directories of runs that ended uncleanly.
func sweepDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), sshdDirPrefix+"*-*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), sshdDirPrefix), "-")
		if n, err := strconv.Atoi(pid); err == nil && !alive(n) {
			_ = os.RemoveAll(d)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (f *fixture) startSSHD(hostKeyFile string) error {
	// SetEnv SHLVL=1: bash sources ~/.bashrc for each command sshd runs,
	// unless it is a nested shell, which SHLVL=1 makes root's. Root's rc
	// file is the machine's, not the fixture's: a developer's pyenv made
	// every root command take 2 s. The test users' shell is sh.
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding yes
PermitOpen 127.0.0.1:%d
MaxStartups 100
MaxSessions 30
LogLevel VERBOSE
SetEnv SHLVL=1
`, f.port, hostKeyFile, filepath.Join(f.dir, "sshd.pid"), filepath.Join(f.dir, "authorized_keys"), f.port)
	cfgFile := filepath.Join(f.dir, "sshd_config")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(f.dir, "sshd.log"))
	if err != nil {
		return err
	}
	f.sshd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", cfgFile)
	f.sshd.Stdout, f.sshd.Stderr = log, log
	// a test binary killed by -timeout skips TestMain's cleanup: sshd dies
	// with it rather than listening on for ever
	f.sshd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread() // Pdeathsig follows the thread that forked
	defer runtime.UnlockOSThread()
	if err := f.sshd.Start(); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", f.addr()); err == nil {
			c.Close()
			return nil
		}
	}
	out, _ := os.ReadFile(log.Name())
	return fmt.Errorf("sshd did not listen on %s: %s", f.addr(), out)
}

func (f *fixture) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(f.port)) }

func (f *fixture) cleanup() {
	if f.sshd != nil && f.sshd.Process != nil {
		_ = f.sshd.Process.Kill()
		_ = f.sshd.Wait()
	}
	if f.usersMade {
		f.removeUsers()
	}
	if f.dir != "" {
		_ = os.RemoveAll(f.dir)
	}
}

// sshHost is an inventory host logging in as user with the fixture's key.
func (f *fixture) sshHost(user string) *v1alpha1.Host {
	return &v1alpha1.Host{Role: v1alpha1.RoleWorker, SSH: &v1alpha1.SSH{Address: "127.0.0.1", Port: f.port, User: user, KeyPath: f.key}}
}

// openSSHHost is the same login through the system ssh binary.
func (f *fixture) openSSHHost(user string) *v1alpha1.Host {
	return &v1alpha1.Host{Role: v1alpha1.RoleWorker, OpenSSH: &v1alpha1.OpenSSH{Address: "127.0.0.1", Port: f.port, User: user, KeyPath: f.key}}
}

func localHost() *v1alpha1.Host {
	return &v1alpha1.Host{Role: v1alpha1.RoleWorker, Localhost: &v1alpha1.Localhost{Enabled: true}}
}

// env is a LookupEnv over a fixed map: nothing leaks in from the test
// process's own environment.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// opts checks host keys against the fixture's known_hosts, logging to log
// when it is given.
func (f *fixture) opts(log *syncBuffer, vars map[string]string) ConnectOptions {
	o := ConnectOptions{KnownHostsPath: f.knownHosts, Timeout: 20 * time.Second, LookupEnv: env(vars)}
	if log != nil {
		o.Log = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

// syncBuffer is a log buffer a test may read while the code writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// copyAndClose copies until EOF, then closes the writing side.
func copyAndClose(dst, src net.Conn) (int64, error) {
	n, err := io.Copy(dst, src)
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	return n, err
}

// connect opens h and closes it when the test ends.
func connect(t *testing.T, h *v1alpha1.Host, o ConnectOptions) *Conn {
	t.Helper()
	c, err := Connect(context.Background(), h, o)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// modes returns one connection of each kind. The SSH ones log in as the
// NOPASSWD user: root's login shell on a developer machine may source a
// slow ~/.bashrc on every command (bash does for sshd sessions), and a
// test run should not pay that hundreds of times. Root logins have their
// own tests.
func (f *fixture) modes(t *testing.T) map[string]*Conn {
	return map[string]*Conn{
		"ssh":       connect(t, f.sshHost(userNoPW), f.opts(nil, nil)),
		"openSSH":   connect(t, f.openSSHHost(userNoPW), f.opts(nil, nil)),
		"localhost": connect(t, localHost(), f.opts(nil, nil)),
	}
}
