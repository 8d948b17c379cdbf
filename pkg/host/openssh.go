package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/retry"
)

// openSSHTransport runs commands through the system ssh binary, so the
// user's ssh_config, ProxyJump, certificates and agent all apply.
type openSSHTransport struct {
	name   string
	bin    string
	args   []string // everything before the destination
	dest   string
	ctlDir string // private ControlPath directory; "" without multiplexing
}

// dialOpenSSH builds the ssh command line and checks it logs in, retrying
// what looks like a host still booting until o.Timeout.
func dialOpenSSH(ctx context.Context, name string, s *v1alpha1.OpenSSH, o ConnectOptions) (*openSSHTransport, error) {
	bin, err := exec.LookPath("ssh")
	if err != nil {
		return nil, fmt.Errorf("host %s: openSSH needs the ssh binary: %w", name, err)
	}
	args, err := openSSHArgs(name, s, o)
	if err != nil {
		return nil, err
	}
	t := &openSSHTransport{name: name, bin: bin, args: args, dest: s.Address}
	if !s.DisableMultiplexing {
		// %C hashes host, port and user: short enough for a socket path
		if t.ctlDir, err = os.MkdirTemp("", "cargoship-ssh-"); err != nil {
			return nil, fmt.Errorf("host %s: control socket directory: %w", name, err)
		}
		t.args = append(t.args, "-o", "ControlMaster=auto", "-o", "ControlPath="+filepath.Join(t.ctlDir, "%C"), "-o", "ControlPersist=300")
	} else {
		t.args = append(t.args, "-o", "ControlPath=none")
	}
	start, tries := time.Now(), &attempts{}
	err = retry.Do(ctx, connectPolicy(name, o), func(ctx context.Context) error {
		// ssh's own complaints are a line or two; a host may send more
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		tail := &tailBuffer{max: stderrTail}
		stderr := &limitWriter{w: tail, max: probeOutput, over: stop}
		err := t.run(pctx, "true", nil, io.Discard, stderr)
		if stderr.done() {
			return retry.Permanent(&OutputLimitError{Host: name, Cmd: "true", Stream: "stderr", Limit: probeOutput})
		}
		if err == nil {
			return nil
		}
		msg := strings.TrimSpace(tail.String())
		if msg == "" {
			msg = err.Error()
		}
		err = fmt.Errorf("host %s: ssh %s: %s", name, s.Address, msg)
		if permanentSSHFailure(msg) {
			return retry.Permanent(err)
		}
		return tries.record(ctx, err)
	})
	if err == nil {
		return t, nil
	}
	_ = t.close()
	return nil, connectFailed(ctx, name, o, start, tries, err)
}

// permanentSSHFailure recognises ssh's messages for what waiting will not fix.
func permanentSSHFailure(msg string) bool {
	for _, s := range []string{"Permission denied", "Host key verification failed", "HOST IDENTIFICATION HAS CHANGED",
		"Bad configuration option", "command-line line", "Could not resolve hostname", "no argument after keyword", "Unsupported option"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// openSSHArgs turns the document's fields into ssh options. They are argv
// for exec, never a shell line, so values go as they are.
func openSSHArgs(name string, s *v1alpha1.OpenSSH, o ConnectOptions) ([]string, error) {
	home := homeDir(o.LookupEnv)
	var args []string
	if s.ConfigPath != "" {
		args = append(args, "-F", expandHome(s.ConfigPath, home))
	}
	if s.KeyPath != "" {
		args = append(args, "-i", expandHome(s.KeyPath, home))
	}
	if s.Port != 0 {
		args = append(args, "-p", strconv.Itoa(s.Port))
	}
	if s.User != "" {
		args = append(args, "-l", s.User)
	}
	opts, err := sshOptions(name, s.Options)
	if err != nil {
		return nil, err
	}
	// ssh keeps the first value it reads, so the document's options above
	// win over these defaults
	args = append(args, opts...)
	args = append(args, "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
		"-o", "ConnectTimeout="+strconv.Itoa(int(min(o.Timeout, 10*time.Second).Seconds())),
		"-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3")
	switch kh := o.KnownHostsPath; {
	case kh == "":
		args = append(args, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null")
	case kh != filepath.Join(home, ".ssh", "known_hosts"):
		args = append(args, "-o", "UserKnownHostsFile="+kh)
	}
	if a, _ := o.LookupEnv("SSH_AUTH_SOCK"); a != "" {
		args = append(args, "-o", "IdentityAgent="+a)
	}
	return args, nil
}

// sshOptions renders the document's options map as -o Key=Value pairs, in
// key order so the command line is the same every run, by the rules
// document validation applies.
func sshOptions(name string, opts map[string]any) ([]string, error) {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		if err := v1alpha1.CheckSSHOptionName(k); err != nil {
			return nil, fmt.Errorf("host %s: openSSH.options: %w", name, err)
		}
		v, err := v1alpha1.SSHOptionValue(opts[k])
		if err != nil {
			return nil, fmt.Errorf("host %s: openSSH.options.%s: %w", name, k, err)
		}
		args = append(args, "-o", k+"="+v)
	}
	return args, nil
}

func (t *openSSHTransport) command(line string) *exec.Cmd {
	args := append(slices.Clone(t.args), "--", t.dest, line)
	cmd := exec.Command(t.bin, args...)
	cmd.WaitDelay = killGrace
	return cmd
}

func (t *openSSHTransport) run(ctx context.Context, line string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := t.command(line)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting ssh: %w", err)
	}
	var err error
	done := make(chan struct{})
	go func() { err = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// the ssh client cannot signal the remote command: Conn stops its
		// process group over a fresh session once this returns
		_ = cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &exitStatus{code: ee.ExitCode()}
	}
	return err
}

func (t *openSSHTransport) close() error {
	if t.ctlDir == "" {
		return nil
	}
	// stop the master now rather than in ControlPersist's five minutes
	args := append(slices.Clone(t.args), "-O", "exit", "--", t.dest)
	_ = exec.Command(t.bin, args...).Run()
	return os.RemoveAll(t.ctlDir)
}
