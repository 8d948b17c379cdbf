package v1alpha1

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKeyFile writes an ed25519 key as cargoship keygen does: the public
// key as PKIX "PUBLIC KEY", the private one as PKCS#8 "PRIVATE KEY".
func writeKeyFile(t *testing.T, path string, private bool) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	typ, der := "PUBLIC KEY", []byte(nil)
	if private {
		typ = "PRIVATE KEY"
		der, err = x509.MarshalPKCS8PrivateKey(priv)
	} else {
		der, err = x509.MarshalPKIXPublicKey(pub)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsTrustedKeysResolveFromTheFile(t *testing.T) {
	dir := t.TempDir()
	writeKeyFile(t, filepath.Join(dir, "keys", "site.pub"), false)
	abs := filepath.Join(t.TempDir(), "other.pub")
	writeKeyFile(t, abs, false)
	file := filepath.Join(dir, "cargoship-config.yaml")
	if err := os.WriteFile(file, []byte("trusted_keys:\n  - keys/site.pub\n  - "+abs+"\nrequire_signature: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// From another directory: a relative key is the settings file's, not the
	// working directory's.
	t.Chdir(t.TempDir())
	s, _, err := LoadSettingsFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !s.RequireSignature {
		t.Error("require_signature: true was not read")
	}
	if got, want := ResolveSettingsPath(file, s.TrustedKeys[0]), filepath.Join(dir, "keys", "site.pub"); got != want {
		t.Errorf("trusted_keys[0] resolves to %s, want %s", got, want)
	}
	if got := ResolveSettingsPath(file, s.TrustedKeys[1]); got != abs {
		t.Errorf("an absolute key path is kept: got %s", got)
	}
}

func TestSettingsBadTrustedKeyIsLocated(t *testing.T) {
	cases := map[string]struct {
		body  string
		setup func(dir string)
		want  string
	}{
		"missing key file": {"log_level: info\ntrusted_keys:\n  - keys/site.pub\n  - keys/gone.pub\n",
			func(dir string) { writeKeyFile(t, filepath.Join(dir, "keys", "site.pub"), false) },
			`cargoship-config.yaml:4:5: trusted_keys[1]: "keys/gone.pub" (DIR/keys/gone.pub): no such key file`},
		"a private key": {"trusted_keys: [signing.key]\n",
			func(dir string) { writeKeyFile(t, filepath.Join(dir, "signing.key"), true) },
			`cargoship-config.yaml:1:16: trusted_keys[0]: "signing.key" (DIR/signing.key): a private key; trust its public key`},
		"not PEM": {"trusted_keys:\n  - junk.pub\n",
			func(dir string) { _ = os.WriteFile(filepath.Join(dir, "junk.pub"), []byte("junk"), 0o644) },
			`cargoship-config.yaml:2:5: trusted_keys[0]: "junk.pub" (DIR/junk.pub): no PEM block`},
		"a directory": {"trusted_keys:\n  - keys\n",
			func(dir string) { _ = os.Mkdir(filepath.Join(dir, "keys"), 0o755) },
			`trusted_keys[0]: "keys" (DIR/keys): cannot read the key file`},
		"an empty path": {"trusted_keys:\n  - \"\"\n", func(string) {},
			`cargoship-config.yaml:2:5: trusted_keys[0]: an empty path`},
		"not a list": {"trusted_keys: keys/site.pub\n", func(string) {},
			`cargoship-config.yaml:1:15: trusted_keys: want a list`},
		"not a bool": {"require_signature: sometimes\n", func(string) {},
			`cargoship-config.yaml:1:20: require_signature: want true or false`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			file := filepath.Join(dir, "cargoship-config.yaml")
			if err := os.WriteFile(file, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadSettingsFile(file)
			if err == nil {
				t.Fatal("no error")
			}
			if want := strings.ReplaceAll(c.want, "DIR", dir); !strings.Contains(err.Error(), want) {
				t.Errorf("error\n  %s\nwant it to contain\n  %s", err, want)
			}
		})
	}
}

// TestParseSettingsReadsNoKeyFile: a document shown in the docs names keys
// that exist only on the reader's machine.
func TestParseSettingsReadsNoKeyFile(t *testing.T) {
	s, _, err := ParseSettings("doc.md#1", []byte("trusted_keys: [/nowhere/site.pub]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.TrustedKeys) != 1 {
		t.Errorf("trusted_keys = %v", s.TrustedKeys)
	}
}
