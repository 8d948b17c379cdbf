package host

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/colonel-byte/cargoship/pkg/localfile"
)

// defaultKeys are tried, as ssh does, when a host names no keyPath.
var defaultKeys = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// keyring holds the agent connection for one Connect: every hop of a
// bastion chain authenticates through it, then it is closed.
type keyring struct {
	lookupEnv func(string) (string, bool)
	conn      net.Conn
	agent     agent.ExtendedAgent
	dialed    bool
}

// agentClient returns the ssh-agent at SSH_AUTH_SOCK, or nil when there is
// none to reach.
func (k *keyring) agentClient() agent.ExtendedAgent {
	if k.dialed {
		return k.agent
	}
	k.dialed = true
	sock, _ := k.lookupEnv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return nil
	}
	k.conn, k.agent = conn, agent.NewClient(conn)
	return k.agent
}

func (k *keyring) close() {
	if k.conn != nil {
		_ = k.conn.Close()
	}
}

// authFor returns how to log in to one hop: the keyPath alone when the
// document names one, else the agent's keys and the default key files.
// desc says what was tried, for the error when the server refuses them.
func (k *keyring) authFor(name string, s sshHop) (ssh.AuthMethod, string, error) {
	if s.keyPath != "" {
		path := expandHome(s.keyPath, homeDir(k.lookupEnv))
		signer, err := k.keyFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("host %s: keyPath: %w", name, err)
		}
		return ssh.PublicKeys(signer), "the key " + path, nil
	}
	var signers []ssh.Signer
	var tried []string
	if a := k.agentClient(); a != nil {
		if ss, err := a.Signers(); err == nil && len(ss) > 0 {
			signers = append(signers, ss...)
			tried = append(tried, fmt.Sprintf("%d ssh-agent keys", len(ss)))
		}
	}
	home := homeDir(k.lookupEnv)
	for _, f := range defaultKeys {
		path := filepath.Join(home, ".ssh", f)
		signer, err := k.keyFile(path)
		if err != nil {
			continue // missing, or encrypted and not in the agent: ssh skips those too
		}
		signers = append(signers, signer)
		tried = append(tried, path)
	}
	if len(signers) == 0 {
		return nil, "", fmt.Errorf("host %s: no SSH key to log in with: set keyPath, start ssh-agent (SSH_AUTH_SOCK), or create ~/.ssh/id_ed25519", name)
	}
	return ssh.PublicKeys(signers...), strings.Join(tried, ", "), nil
}

// keyFile reads a private key. An encrypted key is used through the agent
// when the agent holds it: cargoship never prompts for a passphrase.
func (k *keyring) keyFile(path string) (ssh.Signer, error) {
	pem, err := localfile.Read(path, maxKeyFileSize)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		if s := k.agentSigner(missing.PublicKey); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("%s is encrypted and cargoship does not ask for passphrases: load it into ssh-agent (ssh-add %s) or use a key without a passphrase", path, path)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return signer, nil
}

// agentSigner finds pub among the agent's keys.
func (k *keyring) agentSigner(pub ssh.PublicKey) ssh.Signer {
	a := k.agentClient()
	if a == nil || pub == nil {
		return nil
	}
	ss, err := a.Signers()
	if err != nil {
		return nil
	}
	for _, s := range ss {
		if bytes.Equal(s.PublicKey().Marshal(), pub.Marshal()) {
			return s
		}
	}
	return nil
}

// expandHome resolves a leading ~/ the way a shell would.
func expandHome(path, home string) string {
	if path == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return path
}

// maxKeyFileSize bounds a private key read: an RSA-16384 PEM is ~13 KiB.
const maxKeyFileSize = 1 << 20
