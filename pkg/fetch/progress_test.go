package fetch

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingProgress is a test double for a progress display: it keeps what
// a download reported so the test can compare it with what was sent.
type recordingProgress struct {
	mu    sync.Mutex
	tasks []*recordingTask
}

type recordingTask struct {
	name    string
	total   int64
	current int64
	resets  int
	done    bool
	err     error
}

func (r *recordingProgress) Start(name string, total int64) ProgressTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &recordingTask{name: name, total: total}
	r.tasks = append(r.tasks, t)
	return t
}

func (t *recordingTask) Write(p []byte) (int, error) { t.current += int64(len(p)); return len(p), nil }
func (t *recordingTask) SetCurrent(n int64)          { t.current = n; t.resets++ }
func (t *recordingTask) Done(err error)              { t.done, t.err = true, err }

func TestDownloadReportsProgressAcrossResume(t *testing.T) {
	content := randomBytes(t, 500_000)
	srv := newFileServer(t, content, func(s *fileServer) {
		s.noRange = true // forces a restart from zero after the cut
		s.cutAt = func(n int) int {
			if n == 1 {
				return 123_456
			}
			return -1
		}
	})
	rec := &recordingProgress{}
	f := newFetcher(t)
	f.Progress = rec
	_, _, err := fetchBytes(t, f, Request{Source: srv.url("rke2-images.linux-amd64.tar.zst")})
	require.NoError(t, err)

	require.Len(t, rec.tasks, 1, "one task per download, however many attempts")
	task := rec.tasks[0]
	assert.Equal(t, "rke2-images.linux-amd64.tar.zst", task.name)
	assert.Equal(t, int64(len(content)), task.total)
	assert.Equal(t, int64(len(content)), task.current, "a restart moves the task back instead of counting twice")
	assert.True(t, task.done)
	require.NoError(t, task.err)

	// A cache hit shows no transfer.
	_, _, err = fetchBytes(t, f, Request{Source: srv.url("rke2-images.linux-amd64.tar.zst")})
	require.NoError(t, err)
	assert.Len(t, rec.tasks, 1)
}

func TestDownloadReportsFailureToProgress(t *testing.T) {
	srv := newFileServer(t, randomBytes(t, 1000), func(s *fileServer) {
		s.cutAt = func(int) int { return 10 }
	})
	rec := &recordingProgress{}
	f := newFetcher(t)
	f.Progress = rec
	_, _, err := fetchBytes(t, f, Request{Source: srv.url("f")})
	require.Error(t, err)
	require.Len(t, rec.tasks, 1)
	assert.True(t, rec.tasks[0].done)
	assert.Error(t, rec.tasks[0].err)
}

func TestLogProgressReportsEveryInterval(t *testing.T) {
	var buf bytes.Buffer
	lp := NewLogProgress(slog.New(slog.NewTextHandler(&buf, nil)), 5*time.Second)
	now := time.Unix(1_000_000, 0)
	lp.now = func() time.Time { return now }

	quick := lp.Start("small", 10)
	_, _ = quick.Write(make([]byte, 10))
	quick.Done(nil)
	assert.Empty(t, buf.String(), "a transfer shorter than the interval logs nothing")

	task := lp.Start("k3s-airgap-images-amd64.tar.zst", 1000)
	_, _ = task.Write(make([]byte, 100))
	now = now.Add(2 * time.Second)
	_, _ = task.Write(make([]byte, 100))
	assert.Empty(t, buf.String())
	now = now.Add(4 * time.Second)
	_, _ = task.Write(make([]byte, 300))
	now = now.Add(time.Second)
	_, _ = task.Write(make([]byte, 500))
	task.Done(nil)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, buf.String())
	assert.Contains(t, lines[0], "msg=transferring")
	assert.Contains(t, lines[0], "bytes=500")
	assert.Contains(t, lines[0], "percent=50")
	assert.Contains(t, lines[0], "elapsed=6s")
	assert.Contains(t, lines[1], "msg=transferred")
	assert.Contains(t, lines[1], "bytes=1000")

	failing := lp.Start("broken", -1)
	now = now.Add(10 * time.Second)
	_, _ = failing.Write(make([]byte, 1))
	failing.Done(errors.New("connection reset"))
	assert.Contains(t, buf.String(), "msg=\"transfer failed\"")
	assert.Contains(t, buf.String(), "connection reset")
}

func TestNewProgressDrawsBarsOnTerminal(t *testing.T) {
	var buf syncBuffer
	d := NewProgress(&buf, true)
	task := d.Start("rke2.linux-amd64.tar.gz", 2048)
	_, _ = task.Write(make([]byte, 2048))
	task.Done(nil)
	failed := d.Start("k3s", -1)
	_, _ = failed.Write(make([]byte, 10))
	failed.Done(errors.New("boom"))
	d.Wait()
	out := buf.String()
	assert.Contains(t, out, "rke2.linux-amd64.tar.gz")
	assert.Contains(t, out, "done")
	assert.Contains(t, out, "failed")
}

func TestNewProgressPlainIsLogLines(t *testing.T) {
	d := NewProgress(&bytes.Buffer{}, false)
	_, ok := d.(*LogProgress)
	assert.True(t, ok, "a non-terminal gets plain log lines, got %T", d)
}

// syncBuffer is a bytes.Buffer safe for mpb's render goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
