package fetch

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fileServer is a real HTTP server for one file whose misbehaviour each
// test chooses: failing statuses, connections cut mid-body, stalls, and
// Range support on or off.
type fileServer struct {
	*httptest.Server
	content []byte
	etag    string

	// noRange makes the server ignore Range and always send everything.
	noRange bool
	// status, when set, answers request n (1-based) with that status
	// instead of the file; 0 serves the file.
	status func(n int) int
	// cutAt, when set, ends request n's body at absolute offset cutAt by
	// closing the connection; -1 sends to the end.
	cutAt func(n int) int
	// stallAt, when set, stops sending at that offset on request n and
	// waits until the client goes away.
	stallAt func(n int) int

	mu     sync.Mutex
	n      int
	ranges []string
}

func newFileServer(t testing.TB, content []byte, configure func(*fileServer)) *fileServer {
	t.Helper()
	s := &fileServer{content: content, etag: `"v1"`}
	if configure != nil {
		configure(s)
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// requests is how many requests reached the server.
func (s *fileServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// rangeHeaders lists the Range header of every request ("" for none).
func (s *fileServer) rangeHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

func (s *fileServer) url(name string) string { return s.URL + "/" + name }

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.mu.Unlock()

	if s.status != nil {
		if code := s.status(n); code != 0 {
			if code == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "0")
			}
			http.Error(w, http.StatusText(code), code)
			return
		}
	}
	size := len(s.content)
	start, code := 0, http.StatusOK
	w.Header().Set("ETag", s.etag)
	if rg := r.Header.Get("Range"); rg != "" && !s.noRange {
		w.Header().Set("Accept-Ranges", "bytes")
		from, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		if err != nil || from >= size {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		if ir := r.Header.Get("If-Range"); ir == "" || ir == s.etag {
			start, code = from, http.StatusPartialContent
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, size-1, size))
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(size-start))
	w.WriteHeader(code)

	end := size
	if s.cutAt != nil {
		if c := s.cutAt(n); c >= 0 && c < end {
			end = max(c, start)
		}
	}
	if s.stallAt != nil {
		if c := s.stallAt(n); c >= 0 && c < end {
			_, _ = w.Write(s.content[start:max(c, start)])
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
	}
	_, _ = w.Write(s.content[start:end])
	if end < size {
		// Cut the connection mid-body: the client sees fewer bytes than
		// Content-Length promised.
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}
