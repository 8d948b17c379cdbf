package fleet

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// writeKeyPair writes an OpenSSH private key (0600) and its .pub.
func writeKeyPair(path string, priv crypto.Signer, comment string) error {
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return fmt.Errorf("marshal %s: %w", path, err)
	}
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		return fmt.Errorf("public key of %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// Written to temporary names and renamed, so a process killed halfway
	// never leaves a key without its .pub (or a truncated key) in the cache.
	if err := writeFileAtomic(path+".pub", []byte(authorizedKey(pub, comment)+"\n"), 0o644); err != nil {
		return err
	}
	return writeFileAtomic(path, pem.EncodeToMemory(block), 0o600)
}

func authorizedKey(pub ssh.PublicKey, comment string) string {
	s := pub.Type() + " " + base64.StdEncoding.EncodeToString(pub.Marshal())
	if comment != "" {
		s += " " + comment
	}
	return s
}

// newFleetKey makes the fleet's ed25519 login key.
func newFleetKey(path, fleet string) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	return writeKeyPair(path, priv, "cargoship-fleet-"+fleet)
}

// hostKeyTypes are the keys sshd loads by default. All three are provided so
// the ssh-keygen -A in the unit's drop-in has nothing to generate at boot
// (an RSA key costs about a second of CPU per host).
var hostKeyTypes = []string{"ed25519", "ecdsa", "rsa"}

// ensureHostKeys returns the directory holding a host's cached SSH host keys
// (ssh_host_<type>_key and .pub), generating them on first use. They are
// cached by fleet and host name outside the fleet dir, so a fleet brought up
// again has the same host keys and known_hosts entries stay valid.
func ensureHostKeys(cacheDir, fleet, host string) (string, error) {
	dir := filepath.Join(cacheDir, "hostkeys", fleet, host)
	for _, t := range hostKeyTypes {
		path := filepath.Join(dir, "ssh_host_"+t+"_key")
		if fileExists(path) && fileExists(path+".pub") {
			continue
		}
		var priv crypto.Signer
		var err error
		switch t {
		case "ed25519":
			_, priv, err = ed25519.GenerateKey(rand.Reader)
		case "ecdsa":
			priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		case "rsa":
			priv, err = rsa.GenerateKey(rand.Reader, 3072)
		}
		if err != nil {
			return "", fmt.Errorf("%s: generate %s host key: %w", host, t, err)
		}
		if err := writeKeyPair(path, priv, "root@"+host); err != nil {
			return "", fmt.Errorf("%s: %w", host, err)
		}
	}
	return dir, nil
}

// hostPublicKeys reads a host's cached public host keys.
func hostPublicKeys(keyDir string) ([]ssh.PublicKey, error) {
	var out []ssh.PublicKey
	for _, t := range hostKeyTypes {
		b, err := os.ReadFile(filepath.Join(keyDir, "ssh_host_"+t+"_key.pub"))
		if err != nil {
			return nil, err
		}
		pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyDir, err)
		}
		out = append(out, pub)
	}
	return out, nil
}

// newPassword makes the sudo password for the fleet's sudopw user: random,
// and only letters and digits so it needs no quoting in a shell or YAML.
func newPassword() (string, error) {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return s.String(), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
