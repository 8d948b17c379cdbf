package pkgfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// The seed corpus lives in testdata/fuzz/FuzzOpen (go's corpus format): a
// small valid package plain and compressed, each cut short, and one whose
// manifest is an alias bomb. A crasher found by `go test -fuzz` is
// committed there and runs as a plain test ever after.

func FuzzOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.tar")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := Open(path, OpenOptions{VerifyOnly: true})
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("the error does not name the package: %v", err)
			}
			return
		}
		defer func() { _ = p.Close() }()
		checkOpened(t, p)
	})
}

// checkOpened holds for any package Open accepts: apply may place every
// entry where the index says.
func checkOpened(t *testing.T, p *Package) {
	t.Helper()
	if p.Manifest == nil || p.Distro == nil {
		t.Fatal("opened without a manifest")
	}
	for _, e := range p.Entries() {
		if got, ok := p.Entry(e.Name); !ok || got.SHA256 != e.SHA256 {
			t.Fatalf("entry %s is indexed but not found", e.Name)
		}
		if err := checkEntryName(e.Name); err != nil {
			t.Fatalf("opened with %v", err)
		}
		paths := append([]string{}, e.Symlinks...)
		if e.Target != "" {
			paths = append(paths, e.Target)
		}
		for _, hp := range paths {
			if err := v1alpha1.CheckHostPath(hp); err != nil {
				t.Fatalf("opened with entry %s: %v", e.Name, err)
			}
		}
		if e.Mode > 0o777 {
			t.Fatalf("opened with entry %s of mode %s", e.Name, e.Mode)
		}
	}
}

// TestFuzzOpenSeeds checks the seeds are what they are named: the valid
// packages open, the others are refused, the bomb for its alias.
func TestFuzzOpenSeeds(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzOpen/*")
	if err != nil || len(files) < 5 {
		t.Fatalf("want the five seeds, got %v (%v)", files, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		path := filepath.Join(t.TempDir(), "seed.tar")
		if err := os.WriteFile(path, corpusBytes(t, f), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := Open(path, OpenOptions{VerifyOnly: true})
		switch {
		case strings.HasPrefix(name, "valid-"):
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			checkOpened(t, p)
			_ = p.Close()
		case err == nil:
			t.Errorf("%s opened", name)
		case name == "alias-bomb-manifest" && !strings.Contains(err.Error(), "holds an alias"):
			t.Errorf("%s: want the alias refused, got %v", name, err)
		}
	}
}

// corpusBytes reads a corpus file holding one []byte value.
func corpusBytes(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lit, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "go test fuzz v1\n[]byte(")
	if !ok || !strings.HasSuffix(lit, ")") {
		t.Fatalf("%s is not a corpus file of one []byte", file)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return []byte(s)
}
