package cluster

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// badCase is one kind of bad input: an inventory (or package) change, and
// the words the refusal must contain.
type badCase struct {
	name   string
	edit   func(t *testing.T, c *v1alpha1.Cluster) // changes a copy of the apply view
	pkg    func(t *testing.T, good string) string  // returns the package to use
	expect string
}

// writeInventory writes c to a file for a run to read.
func writeInventory(t *testing.T, c *v1alpha1.Cluster) string {
	t.Helper()
	b, err := yaml.MarshalWithOptions(c, yaml.UseJSONMarshaler())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// cloneCluster deep-copies an inventory through YAML, as a user edits one.
func cloneCluster(t *testing.T, c *v1alpha1.Cluster) *v1alpha1.Cluster {
	t.Helper()
	out, _, err := v1alpha1.LoadClusterFile(writeInventory(t, c))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newKeyFile writes a fresh ed25519 key no host trusts.
func newKeyFile(t *testing.T) (path string, pub ssh.PublicKey) {
	t.Helper()
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(sk, "")
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "id_wrong")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, err = ssh.NewPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	return path, pub
}

// tampered copies a package and changes one byte in its middle.
func tampered(t *testing.T, good string) string {
	t.Helper()
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	p := filepath.Join(t.TempDir(), filepath.Base(good))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// expectRefusal runs a whole apply that must fail with words in its error.
func expectRefusal(t *testing.T, w *world, pkgPath, inventory, words string) {
	t.Helper()
	o := w.runOptions(pkgPath, inventory, false)
	o.Phase.ConnectTimeout = 5e9
	l, err := action.Load(context.Background(), o)
	if err == nil {
		defer func() { _ = l.Close() }() // only removes the extracted package's temp dir
		err = action.Run(context.Background(), l, action.ApplyPhases())
	}
	if err == nil {
		t.Fatalf("the run succeeded; want a refusal mentioning %q", words)
	}
	said := false
	for _, w := range strings.Split(words, "|") {
		said = said || strings.Contains(strings.ToLower(err.Error()), strings.ToLower(w))
	}
	if !said {
		t.Fatalf("the refusal does not say %q:\n%v", words, err)
	}
	t.Logf("refused as expected: %v", firstLines(err.Error(), 3))
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}
