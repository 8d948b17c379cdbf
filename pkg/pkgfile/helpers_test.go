package pkgfile

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// demoDir is the checked-in demo definition.
const demoDir = "../../testdata/demo"

// randomBytes is incompressible test content.
func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes a file, creating its directory.
func writeFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

// copyDemo copies testdata/demo into a fresh directory, so a test can add
// to it without touching the checked-in copy.
func copyDemo(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(demoDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(demoDir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), data, info.Mode().Perm())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// createOpts are options for a test create with its own cache and temp dirs.
func createOpts(t testing.TB, def string) CreateOptions {
	t.Helper()
	return CreateOptions{
		Definition: def,
		OutputDir:  t.TempDir(),
		CacheDir:   t.TempDir(),
		TmpDir:     t.TempDir(),
		Backoff:    time.Millisecond,
		BuildTime:  time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
	}
}

// mustCreate builds a package and fails the test on error.
func mustCreate(t testing.TB, opts CreateOptions) *CreateResult {
	t.Helper()
	res, err := Create(context.Background(), opts)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return res
}

// dirNames lists a directory's entries (hidden ones too).
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// fileServer serves named files over real HTTP, counts requests per path,
// and can cut a file's body half-way by closing the connection.
type fileServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	cut   map[string]bool
	hits  map[string]int
}

func newFileServer(t testing.TB, files map[string][]byte) *fileServer {
	t.Helper()
	s := &fileServer{files: files, cut: map[string]bool{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	data, ok := s.files[r.URL.Path]
	cut := s.cut[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if !cut {
		http.ServeContent(w, r, r.URL.Path, time.Unix(0, 0), bytes.NewReader(data))
		return
	}
	// Promise the whole file, send half, then drop the connection.
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data[:len(data)/2])
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func (s *fileServer) url(path string) string { return s.URL + path }

// requests is how many requests reached path.
func (s *fileServer) requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// total is how many requests reached the server.
func (s *fileServer) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.hits {
		n += c
	}
	return n
}

// archive builds an archive of kind tar, tar.gz, tar.zst or zip holding files.
func archive(t testing.TB, kind string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if kind == "zip" {
		zw := zip.NewWriter(&buf)
		for name, data := range files {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write(data)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var w io.WriteCloser = nopCloser{&buf}
	switch kind {
	case "tar.gz":
		w = gzip.NewWriter(&buf)
	case "tar.zst":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	}
	tw := tar.NewWriter(w)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
