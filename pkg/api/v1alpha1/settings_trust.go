package v1alpha1

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/localfile"
)

// maxKeyFileSize bounds a key file read: a PEM key is under a kilobyte.
const maxKeyFileSize = 64 << 10

// ResolveSettingsPath resolves a path a settings file names: ~ and
// $VARIABLES are expanded, then a relative path is taken from the settings
// file's directory, so keys kept beside the file are found from anywhere.
func ResolveSettingsPath(settingsFile, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	p = os.ExpandEnv(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(settingsFile), p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// validateTrust checks trusted_keys; with readKeys (a file on disk, not a
// document shown in the docs) every key file is read and parsed too.
func validateTrust(d *document, s *Settings, readKeys bool) {
	for i, k := range s.TrustedKeys {
		path := fmt.Sprintf("trusted_keys[%d]", i)
		if strings.TrimSpace(k) == "" {
			d.errorf(path, "an empty path; name a public key file such as the cargoship.pub cargoship keygen writes")
			continue
		}
		if !readKeys {
			continue
		}
		resolved := ResolveSettingsPath(d.file, k)
		if err := checkPublicKeyFile(resolved); err != nil {
			if resolved != k {
				d.errorf(path, "%q (%s): %v", k, resolved, err)
			} else {
				d.errorf(path, "%v", err)
			}
		}
	}
}

// checkPublicKeyFile is pkgfile.LoadPublicKey's check, which this package
// cannot call: pkgfile imports it.
func checkPublicKeyFile(path string) error {
	data, err := localfile.Read(path, maxKeyFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such key file")
	case err != nil:
		return fmt.Errorf("cannot read the key file: %w", err)
	}
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return errors.New(`no PEM block; want the "PUBLIC KEY" file cargoship keygen writes`)
	case block.Type == "PRIVATE KEY":
		return errors.New("a private key; trust its public key (cargoship.pub), and keep the private key with whoever signs")
	case block.Type != "PUBLIC KEY":
		return fmt.Errorf(`a %q PEM block; want "PUBLIC KEY"`, block.Type)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("not a public key: %w", err)
	}
	if _, ok := k.(ed25519.PublicKey); !ok {
		return fmt.Errorf("a %T, not an ed25519 key", k)
	}
	return nil
}
