package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
)

// readToken is token, or the content of token-file (trimmed), as the
// engine reads --token and --token-file.
func readToken(token, file string) (string, error) {
	if token != "" || file == "" {
		return strings.TrimSpace(token), nil
	}
	b, err := hostfs.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("failed to read token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// passwords are the server and agent credentials, as server/cred/passwd
// holds them.
type passwords struct{ server, agent string }

// readPasswd reads server/cred/passwd lines "<password>,<user>,<uid>,<group>".
func readPasswd(d dataDir) (passwords, bool, error) {
	b, err := hostfs.ReadFile(d.passwd())
	if errors.Is(err, fs.ErrNotExist) {
		return passwords{}, false, nil
	}
	if err != nil {
		return passwords{}, false, err
	}
	var p passwords
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 2 {
			continue
		}
		switch f[1] {
		case "server":
			p.server = f[0]
		case "node":
			p.agent = f[0]
		}
	}
	return p, p.server != "", nil
}

func writePasswd(d dataDir, p passwords) error {
	content := fmt.Sprintf("%s,server,server,k3s:server\n%s,node,node,k3s:agent\n", p.server, p.agent)
	return hostfs.WriteFile(d.passwd(), []byte(content), 0o600)
}

// serverPasswords settles a server's credentials. The configured token
// must agree with what the datastore was created with (the real engine
// encrypts its bootstrap data with it and refuses a different one); a
// K10 token's hash must match the cluster CA. Without any token a random
// one is made, as k3s does.
func serverPasswords(d dataDir, caPEM []byte, token, agentToken string, joined *passwords) (passwords, error) {
	var p passwords
	if token != "" {
		t, err := pki.ParseToken(token, "server")
		if err != nil {
			return p, err
		}
		if t.CAHash != "" && t.CAHash != pki.CAHash(caPEM) {
			return p, fmt.Errorf("token CA hash does not match the Cluster CA certificate hash: %s != %s", t.CAHash, pki.CAHash(caPEM))
		}
		p.server = t.Password
	}
	stored, ok, err := readPasswd(d)
	if err != nil {
		return p, err
	}
	switch {
	case ok && p.server != "" && p.server != stored.server:
		return p, errors.New("starting kubernetes: preparing server: failed to bootstrap cluster data: bootstrap data already found and encrypted with different token")
	case ok:
		p = stored
	case p.server == "":
		p.server = randomHex(16)
	}
	switch {
	case agentToken != "":
		t, err := pki.ParseToken(agentToken, "node")
		if err != nil {
			return p, err
		}
		p.agent = t.Password
	case joined != nil:
		p.agent = joined.agent
	case p.agent == "":
		p.agent = p.server
	}
	return p, writePasswd(d, p)
}

// writeTokens writes server/token (K10<ca-hash>::server:<password>, 0600) and
// node-token as a link to it, and server/agent-token: its own file when an
// agent token is set, otherwise a link to token
// (docs/reference/engines.md 4).
func writeTokens(d dataDir, caPEM []byte, p passwords) error {
	hash := pki.CAHash(caPEM)
	server := pki.Token{CAHash: hash, Username: "server", Password: p.server}
	if err := hostfs.WriteFile(d.token(), []byte(server.String()+"\n"), 0o600); err != nil {
		return err
	}
	if err := hostfs.Symlink("token", d.nodeToken()); err != nil {
		return err
	}
	if p.agent == p.server {
		return hostfs.Symlink("token", d.agentToken())
	}
	agent := pki.Token{CAHash: hash, Username: "node", Password: p.agent}
	return hostfs.WriteFile(d.agentToken(), []byte(agent.String()+"\n"), 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
