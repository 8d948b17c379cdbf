package host

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// KnownHostsFromEnv picks the known_hosts file as docs/apply.md, "Host
// keys", describes:
// SSH_KNOWN_HOSTS names it; SSH_KNOWN_HOSTS set to "" turns host key
// checking off (returns ""); unset means ~/.ssh/known_hosts. lookupEnv is
// os.LookupEnv or a stand-in: set-but-empty must differ from unset.
func KnownHostsFromEnv(lookupEnv func(string) (string, bool)) string {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if v, set := lookupEnv("SSH_KNOWN_HOSTS"); set {
		return v
	}
	return filepath.Join(homeDir(lookupEnv), ".ssh", "known_hosts")
}

func homeDir(lookupEnv func(string) (string, bool)) string {
	if h, _ := lookupEnv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// HostKeyError is a host key that did not check out.
type HostKeyError struct {
	Host    string        // the inventory's name for the host
	Addr    string        // host:port dialled
	Offered ssh.PublicKey // the key the host presented
	// Kind is "unknown" (not in known_hosts), "mismatch" (known_hosts or
	// hostKey holds another key) or "revoked".
	Kind string
	File string // the known_hosts file; "" when hostKey pins the key
	Line int    // line of File holding the other (or revoked) key
	Pin  string // the hostKey value, for a pin mismatch
}

func (e *HostKeyError) Error() string {
	offered := e.Offered.Type() + " " + ssh.FingerprintSHA256(e.Offered)
	host, port, _ := net.SplitHostPort(e.Addr)
	switch {
	case e.Kind == "revoked":
		return fmt.Sprintf("host key for %s (%s) is revoked: it offered %s, marked @revoked at line %d of %s", e.Host, e.Addr, offered, e.Line, e.File)
	case e.Kind == "unknown":
		return fmt.Sprintf("unknown host key for %s (%s): it offered %s, which %s does not list; check the fingerprint and add it (ssh-keyscan -p %s %s >> %s), pin it with hostKey, or set SSH_KNOWN_HOSTS=\"\" to turn checking off",
			e.Host, e.Addr, offered, e.File, port, host, e.File)
	case e.File == "":
		return fmt.Sprintf("host key mismatch for %s (%s): it offered %s, but hostKey pins %s (fix hostKey, or find out why the host's key changed)", e.Host, e.Addr, offered, e.Pin)
	}
	return fmt.Sprintf("host key mismatch for %s (%s): it offered %s, but line %d of %s holds another key for it (remove the line %d of %s or fix hostKey)",
		e.Host, e.Addr, offered, e.Line, e.File, e.Line, e.File)
}

// hostKeyCheck builds the callback that checks addr's key, and the key
// algorithms to ask for so that a host with several keys offers the one we
// know (otherwise a known ECDSA key looks like a mismatch when the host
// offers Ed25519 first).
func hostKeyCheck(name, addr, pin, knownHosts string) (ssh.HostKeyCallback, []string, error) {
	if pin != "" {
		return pinnedKey(name, addr, pin)
	}
	if knownHosts == "" {
		return ssh.InsecureIgnoreHostKey(), nil, nil
	}
	db, err := knownhosts.New(knownHosts)
	if errors.Is(err, fs.ErrNotExist) {
		// a missing file lists nobody: every host is unknown
		db = func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	} else if err != nil {
		return nil, nil, fmt.Errorf("host %s: reading known hosts %s: %w", name, knownHosts, err)
	}
	cb := func(hostport string, remote net.Addr, key ssh.PublicKey) error {
		err := db(hostport, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case errors.As(err, &re):
			return &HostKeyError{Host: name, Addr: addr, Offered: key, Kind: "revoked", File: re.Revoked.Filename, Line: re.Revoked.Line}
		case errors.As(err, &ke) && len(ke.Want) == 0:
			return &HostKeyError{Host: name, Addr: addr, Offered: key, Kind: "unknown", File: knownHosts}
		case errors.As(err, &ke):
			return &HostKeyError{Host: name, Addr: addr, Offered: key, Kind: "mismatch", File: ke.Want[0].Filename, Line: ke.Want[0].Line}
		}
		return err
	}
	return cb, knownAlgorithms(db, addr), nil
}

// knownAlgorithms asks db which key types it holds for addr: a key no file
// can hold makes it answer with the keys it knows.
func knownAlgorithms(db ssh.HostKeyCallback, addr string) []string {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if err := db(addr, &net.TCPAddr{IP: net.IPv4zero}, probe); !errors.As(err, &ke) {
		return nil
	}
	var algos []string
	for _, k := range ke.Want {
		algos = appendAlgorithms(algos, k.Key.Type())
	}
	return algos
}

// appendAlgorithms adds the signature algorithms a key type signs with.
func appendAlgorithms(algos []string, keyType string) []string {
	add := []string{keyType}
	if keyType == ssh.KeyAlgoRSA {
		add = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	for _, a := range add {
		if !slices.Contains(algos, a) {
			algos = append(algos, a)
		}
	}
	return algos
}

// pinnedKey checks the host's key against hostKey: an authorized_keys line
// ("ssh-ed25519 AAAA... comment") or a fingerprint ("SHA256:...").
// The pin is read as document validation reads it.
func pinnedKey(name, addr, pin string) (ssh.HostKeyCallback, []string, error) {
	fingerprint, want, err := v1alpha1.ParseHostKey(pin)
	if err != nil {
		return nil, nil, fmt.Errorf("host %s: hostKey %w", name, err)
	}
	if want == nil {
		return func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if ssh.FingerprintSHA256(key) != fingerprint {
				return &HostKeyError{Host: name, Addr: addr, Offered: key, Kind: "mismatch", Pin: fingerprint}
			}
			return nil
		}, nil, nil
	}
	return func(_ string, _ net.Addr, key ssh.PublicKey) error {
		if !bytes.Equal(key.Marshal(), want.Marshal()) {
			return &HostKeyError{Host: name, Addr: addr, Offered: key, Kind: "mismatch", Pin: ssh.FingerprintSHA256(want)}
		}
		return nil
	}, appendAlgorithms(nil, want.Type()), nil
}
