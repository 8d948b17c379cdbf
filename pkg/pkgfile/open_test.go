package pkgfile

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tarEntry is one entry of a package read whole, for tampering tests.
type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func readPackageEntries(t testing.TB, path string) []tarEntry {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := zstd.NewReader(f)
	require.NoError(t, err)
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, tarEntry{h, data})
	}
}

func writePackageEntries(t testing.TB, path string, entries []tarEntry) {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := *e.hdr
		h.Size = int64(len(e.data))
		require.NoError(t, tw.WriteHeader(&h))
		_, err := tw.Write(e.data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	writeFile(t, path, buf.Bytes(), 0o644)
}

// tampered writes a copy of src changed by edit and returns its path.
func tampered(t testing.TB, src string, edit func([]tarEntry) []tarEntry) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	writePackageEntries(t, dst, edit(readPackageEntries(t, src)))
	return dst
}

func flipByte(data []byte, at int) []byte {
	c := bytes.Clone(data)
	c[at] ^= 0x01
	return c
}

func indexOf(t testing.TB, es []tarEntry, name string) int {
	t.Helper()
	for i, e := range es {
		if e.hdr.Name == name {
			return i
		}
	}
	t.Fatalf("no entry %s", name)
	return -1
}

// signedDemo builds the demo package signed with a fresh key.
func signedDemo(t testing.TB) (string, ed25519.PublicKey) {
	t.Helper()
	pub, priv, err := GenerateKeyPair()
	require.NoError(t, err)
	opts := createOpts(t, demoDir)
	opts.SigningKey = priv
	return mustCreate(t, opts).Path, pub
}

func TestOpenVerifiesASignedPackage(t *testing.T) {
	pkg, pub := signedDemo(t)
	for _, verifyOnly := range []bool{false, true} {
		p, err := Open(pkg, OpenOptions{PublicKey: pub, TmpDir: t.TempDir(), VerifyOnly: verifyOnly})
		require.NoError(t, err)
		assert.True(t, p.Signed)
		assert.True(t, p.SignatureVerified)
		assert.Equal(t, KeyID(pub), p.KeyID)
		require.NoError(t, p.Close())
	}
	// Without a key a signed package still opens; it is reported signed, unverified.
	p, err := Open(pkg, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	assert.True(t, p.Signed)
	assert.False(t, p.SignatureVerified)
	p.Close()
}

func TestOpenRejectsEveryTampering(t *testing.T) {
	pkg, pub := signedDemo(t)
	otherPub, _, err := GenerateKeyPair()
	require.NoError(t, err)
	unsigned := mustCreate(t, createOpts(t, demoDir)).Path

	cases := []struct {
		name string
		pkg  string
		key  ed25519.PublicKey
		want []string
	}{
		{"one byte of a payload entry", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, "os/0/demo-engine")
			es[i].data = flipByte(es[i].data, 20)
			return es
		}), nil, []string{"entry os/0/demo-engine", "content changed"}},
		{"one byte of checksums.txt", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, ChecksumsName)
			es[i].data = flipByte(es[i].data, 3)
			return es
		}), nil, []string{"checksums.txt was changed"}},
		{"one byte of manifest.yaml, unsigned check", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, ManifestName)
			at := bytes.Index(es[i].data, []byte("local files only"))
			es[i].data = flipByte(es[i].data, at)
			return es
		}), nil, []string{"manifest.yaml was changed"}},
		{"one byte of manifest.yaml, signed check", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, ManifestName)
			at := bytes.Index(es[i].data, []byte("local files only"))
			es[i].data = flipByte(es[i].data, at)
			return es
		}), pub, []string{"manifest.sig", "signature does not verify"}},
		{"a missing entry", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, "os/2/demo-tool")
			return append(es[:i], es[i+1:]...)
		}), nil, []string{"missing entry os/2/demo-tool"}},
		{"an extra entry", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			return append(es, tarEntry{&tar.Header{Name: "files/9/extra", Mode: 0o644, Typeflag: tar.TypeReg}, []byte("extra")})
		}), nil, []string{"extra entry files/9/extra"}},
		{"an entry twice", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			return append(es, es[indexOf(t, es, "os/0/demo-engine")])
		}), nil, []string{"entry os/0/demo-engine appears twice"}},
		{"an entry escaping the package", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			return append(es, tarEntry{&tar.Header{Name: "../evil", Mode: 0o644, Typeflag: tar.TypeReg}, []byte("x")})
		}), nil, []string{`"../evil"`}},
		{"a symlink entry", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			return append(es, tarEntry{&tar.Header{Name: "files/0/link", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}, nil})
		}), nil, []string{"not a regular file"}},
		{"a bad signature", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, SignatureName)
			es[i].data = flipByte(es[i].data, 5)
			return es
		}), pub, []string{"manifest.sig"}},
		{"the wrong key", pkg, otherPub, []string{"signature does not verify", KeyID(otherPub)}},
		{"an unsigned package with a key", unsigned, pub, []string{"not signed"}},
		{"no manifest first", tampered(t, pkg, func(es []tarEntry) []tarEntry {
			return append(es[1:], es[0])
		}), nil, []string{"first entry is manifest.sig"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, verifyOnly := range []bool{true, false} {
				tmp := t.TempDir()
				_, err := Open(tc.pkg, OpenOptions{PublicKey: tc.key, TmpDir: tmp, VerifyOnly: verifyOnly})
				require.Error(t, err)
				for _, w := range tc.want {
					require.ErrorContains(t, err, w)
				}
				require.ErrorContains(t, err, tc.pkg, "the error names the package")
				assert.Empty(t, dirNames(t, tmp), "a failed open leaves nothing extracted")
			}
		})
	}
}

func TestOpenRejectsACorruptedFile(t *testing.T) {
	pkg, _ := signedDemo(t)
	data, err := os.ReadFile(pkg)
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "bad.tar.zst")
	writeFile(t, bad, flipByte(data, len(data)/2), 0o644)
	_, err = Open(bad, OpenOptions{VerifyOnly: true})
	require.Error(t, err)

	trunc := filepath.Join(t.TempDir(), "trunc.tar.zst")
	writeFile(t, trunc, data[:len(data)-40], 0o644)
	_, err = Open(trunc, OpenOptions{VerifyOnly: true})
	require.Error(t, err)

	_, err = Open(filepath.Join(t.TempDir(), "none.tar.zst"), OpenOptions{})
	require.ErrorContains(t, err, "no such file")
}

func TestOpenEntryAndExtract(t *testing.T) {
	pkg, _ := signedDemo(t)
	for _, verifyOnly := range []bool{false, true} {
		p, err := Open(pkg, OpenOptions{TmpDir: t.TempDir(), VerifyOnly: verifyOnly})
		require.NoError(t, err)
		for _, e := range p.Entries() {
			assert.Len(t, readEntry(t, p, e.Name), int(e.Size), e.Name)
		}
		_, err = p.OpenEntry("files/7/nothing")
		require.ErrorContains(t, err, "no entry files/7/nothing")

		path, err := p.EntryPath("os/0/demo-engine")
		if verifyOnly {
			require.ErrorContains(t, err, "verify-only")
		} else {
			require.NoError(t, err)
			b, _ := os.ReadFile(path)
			assert.Equal(t, readEntry(t, p, "os/0/demo-engine"), b)
		}

		// An extracted tree checks with the standard tool.
		dir := t.TempDir()
		require.NoError(t, p.Extract(dir))
		cmd := exec.Command("sha256sum", "-c", "--strict", ChecksumsName)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, len(p.Entries()), strings.Count(string(out), ": OK"))
		require.NoError(t, p.Close())
	}
}

func TestOpenEntryCatchesAChangedExtractedFile(t *testing.T) {
	pkg, _ := signedDemo(t)
	p, err := Open(pkg, OpenOptions{TmpDir: t.TempDir()})
	require.NoError(t, err)
	defer p.Close()
	path, err := p.EntryPath("files/0/cargoship-demo")
	require.NoError(t, err)
	data, _ := os.ReadFile(path)
	writeFile(t, path, flipByte(data, 0), 0o600)
	r, err := p.OpenEntry("files/0/cargoship-demo")
	require.NoError(t, err)
	defer r.Close()
	_, err = io.ReadAll(r)
	require.ErrorContains(t, err, "entry files/0/cargoship-demo: content changed")
}

func TestCloseRemovesTheExtractedCopy(t *testing.T) {
	pkg, _ := signedDemo(t)
	tmp := t.TempDir()
	p, err := Open(pkg, OpenOptions{TmpDir: tmp})
	require.NoError(t, err)
	assert.Empty(t, dirNames(t, tmp), "Open writes nothing")
	readEntry(t, p, "os/0/demo-engine")
	readEntry(t, p, "files/0/cargoship-demo")
	assert.Len(t, dirNames(t, tmp), 1, "the first entry opened extracts the package, once")
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "twice is fine")
	assert.Empty(t, dirNames(t, tmp))
}

// A converged apply opens no entry: the package is read once, by Open,
// and nothing is written beside it.
func TestOpenWithoutOpeningAnEntryNeverExtracts(t *testing.T) {
	pkg, _ := signedDemo(t)
	tmp := t.TempDir()
	p, err := Open(pkg, OpenOptions{TmpDir: tmp})
	require.NoError(t, err)
	_, ok := p.Entry("os/0/demo-engine")
	require.True(t, ok)
	assert.Empty(t, dirNames(t, tmp))
	require.NoError(t, p.Close())
	assert.Empty(t, dirNames(t, tmp))
}

// The extraction reads the file again: bytes changed since Open are
// refused there, and nothing is left behind.
func TestExtractionRefusesAPackageChangedAfterOpen(t *testing.T) {
	pkg, _ := signedDemo(t)
	data, err := os.ReadFile(pkg)
	require.NoError(t, err)
	tmp := t.TempDir()
	p, err := Open(pkg, OpenOptions{TmpDir: tmp})
	require.NoError(t, err)
	defer p.Close()
	writeFile(t, pkg, flipByte(data, len(data)/2), 0o644)
	_, err = p.OpenEntry("os/0/demo-engine")
	require.Error(t, err)
	assert.Contains(t, err.Error(), pkg)
	assert.Empty(t, dirNames(t, tmp), "a failed extraction leaves nothing")
}

// Hosts open entries in parallel: they share one extraction.
func TestConcurrentOpenEntryExtractsOnce(t *testing.T) {
	pkg, _ := signedDemo(t)
	tmp := t.TempDir()
	p, err := Open(pkg, OpenOptions{TmpDir: tmp})
	require.NoError(t, err)
	defer p.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.OpenEntry("os/0/demo-engine")
			if assert.NoError(t, err) {
				_, err = io.Copy(io.Discard, r)
				assert.NoError(t, err)
				r.Close()
			}
		}()
	}
	wg.Wait()
	assert.Len(t, dirNames(t, tmp), 1)
}

func TestOpenHonoursCancellation(t *testing.T) {
	pkg, _ := signedDemo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tmp := t.TempDir()
	_, err := OpenContext(ctx, pkg, OpenOptions{TmpDir: tmp})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, dirNames(t, tmp))
}
