package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/pkg/sftp"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// ErrNoSFTP means the host has no sftp-server; Upload then streams
// through cat instead.
var ErrNoSFTP = errors.New("no sftp-server on the host")

// SFTPOpener is a Runner that can open an SFTP session as root. Upload
// uses it when the Runner offers it.
type SFTPOpener interface {
	OpenSFTP(ctx context.Context) (*SFTP, error)
}

// SFTP is an SFTP session on a host, running as root. Close it.
//
// The server runs with umask 077, so a file the session creates is 0600
// from its first moment: pkg/sftp cannot send a mode with the open, and a
// chmod after it leaves a window in which another user may open the file
// and go on reading what is written later. OpenFile and MkdirAll below
// wrap the client's for that.
type SFTP struct {
	*sftp.Client
	done <-chan error
	ctx  context.Context
	c    *Conn
}

// OpenFile opens path as the client's OpenFile does. With O_CREATE and
// O_TRUNC it removes what is there first and creates the file afresh
// (O_EXCL): a reader holding the old file open, perhaps from before it was
// private, sees none of the new content.
func (s *SFTP) OpenFile(path string, f int) (*sftp.File, error) {
	if f&os.O_CREATE != 0 && f&os.O_TRUNC != 0 {
		if err := s.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		f |= os.O_EXCL
	}
	return s.Client.OpenFile(path, f)
}

// MkdirAll creates dir and its parents through a shell as root, with the
// host's usual umask: the session's 077 would make them 0700.
func (s *SFTP) MkdirAll(dir string) error { return MkdirAll(s.ctx, s.c, dir, 0) }

// Close ends the session and waits for the server process to exit.
func (s *SFTP) Close() error {
	err := s.Client.Close()
	if perr := <-s.done; err == nil {
		err = perr
	}
	return err
}

// sftpServers are where distributions install OpenSSH's sftp-server.
var sftpServers = []string{
	"/usr/lib/openssh/sftp-server",     // Debian, Ubuntu
	"/usr/libexec/openssh/sftp-server", // Enterprise Linux, Fedora, SUSE
	"/usr/lib/ssh/sftp-server",         // Alpine, Arch
	"/usr/libexec/sftp-server",
	"/usr/lib/sftp-server",
}

// OpenSFTP starts the host's sftp-server through Sudo and speaks SFTP
// over its stdin and stdout. That works the same for every connection
// mode and every sudo mode, and writes root-owned paths without a detour
// through /tmp. It returns ErrNoSFTP when the host has no sftp-server.
// ctx bounds the whole session.
func (c *Conn) OpenSFTP(ctx context.Context) (*SFTP, error) {
	server, err := c.sftpServer(ctx)
	if err != nil {
		return nil, err
	}
	if server == "" {
		return nil, fmt.Errorf("%s: %w", c.name, ErrNoSFTP)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := c.Sudo(ctx, "umask 077; exec "+shell.Quote(server), WithStdin(inR), WithStdout(outW))
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err) // the client's reads end
		inR.CloseWithError(err)  // and so do its writes
		if errors.Is(err, io.EOF) {
			err = nil
		}
		done <- err
	}()
	client, err := sftp.NewClientPipe(outR, inW, sftp.UseConcurrentWrites(true))
	if err != nil {
		_ = inW.Close()
		if perr := <-done; perr != nil {
			err = perr
		}
		return nil, fmt.Errorf("%s: starting %s: %w", c.name, server, err)
	}
	return &SFTP{Client: client, done: done, ctx: ctx, c: c}, nil
}

// sftpServer finds the sftp-server binary once per connection.
func (c *Conn) sftpServer(ctx context.Context) (string, error) {
	c.sftpMu.Lock()
	defer c.sftpMu.Unlock()
	if c.sftpFound {
		return c.sftpPath, nil
	}
	body := `for p in "$@"; do if [ -x "$p" ]; then echo "$p"; exit 0; fi; done`
	out, err := c.Run(ctx, Script(body, sftpServers...))
	if err != nil {
		return "", err
	}
	c.sftpPath, c.sftpFound = strings.TrimSpace(out), true
	return c.sftpPath, nil
}
