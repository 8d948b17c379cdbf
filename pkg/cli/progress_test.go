package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/log/ptytest"
)

func TestLineProgressLogsOneHumanLinePerUpload(t *testing.T) {
	var buf bytes.Buffer
	lp := newLineProgress(slog.New(slog.NewTextHandler(&buf, nil)))
	now := time.Unix(1_000_000, 0)
	lp.now = func() time.Time { return now }

	tr := lp.Start("kw0", "images/images-amd64.tar.zst", 83_361_792)
	for range 1272 { // 64 KiB reads, as a transfer makes them
		tr.Add(65_536)
	}
	tr.Add(83_361_792 - 1272*65_536)
	assert.Empty(t, buf.String(), "nothing while it runs: no line per read, nothing that redraws")
	now = now.Add(2 * time.Second)
	tr.Done(nil)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1)
	for _, want := range []string{"msg=uploaded", "host=kw0", "file=images/images-amd64.tar.zst", `sent="79.5 MiB"`, "took=2s", `speed="39.8 MiB/s"`} {
		assert.Contains(t, lines[0], want)
	}

	buf.Reset()
	tr = lp.Start("kw1", "os/0/k3s", 4096)
	tr.Add(1000)
	tr.Done(errors.New("connection lost"))
	assert.Contains(t, buf.String(), `level=WARN msg="upload broke off" host=kw1 file=os/0/k3s sent="1000 bytes" of="4.0 KiB"`)
}

func TestSpeedNeedsAMeasurableTime(t *testing.T) {
	assert.Empty(t, speed(100, 0))
	assert.Equal(t, "1.0 KiB/s", speed(512, 500*time.Millisecond))
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

func TestBarProgressDrawsABarPerHostAndFinishesWithTheBatches(t *testing.T) {
	var out syncBuffer
	bp := newBarProgress(&out)
	bp.tick = 5 * time.Millisecond

	var wg sync.WaitGroup
	for i, host := range []string{"kc0", "kw0", "kw1"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := bp.Begin(host)
			defer end()
			for f := range 2 { // two files, one bar
				tr := bp.Start(host, fmt.Sprintf("files/%d", f), 1<<20)
				for range 16 {
					tr.Add(1 << 16)
					time.Sleep(time.Millisecond)
				}
				if i == 2 && f == 1 {
					tr.Done(errors.New("broken pipe"))
					return
				}
				tr.Done(nil)
			}
		}()
	}
	wg.Wait()

	bp.mu.Lock()
	assert.Nil(t, bp.p, "the last batch's end drew the bars to the end and let them go")
	bp.mu.Unlock()
	got := out.String()
	for host, want := range map[string]string{"[kc0]": "2.0 MiB / 2.0 MiB", "[kw0]": "2.0 MiB / 2.0 MiB", "[kw1]": "failed"} {
		last := lastLineOf(got, host)
		assert.Contains(t, last, want, "the last draw of %s, one bar for both its files:\n%s", host, got)
	}

	// A transfer outside a batch is its own, and a new batch draws anew.
	tr := bp.Start("kw2", "manifests/a.yaml", 10)
	tr.Add(10)
	tr.Done(nil)
	bp.mu.Lock()
	assert.Nil(t, bp.p)
	bp.mu.Unlock()
	assert.Contains(t, out.String(), "[kw2]")
}

// lastLineOf is the last line of mpb's output that mentions host.
func lastLineOf(out, host string) string {
	last := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, host) {
			last = l
		}
	}
	return last
}

func TestBarProgressFinishesAHostsBarWhenItsBatchEnds(t *testing.T) {
	var out syncBuffer
	bp := newBarProgress(&out)
	endA, endB := bp.Begin("kw0"), bp.Begin("kw1")
	a, b := bp.Start("kw0", "a", 10), bp.Start("kw1", "b", 10)
	a.Add(10)
	a.Done(nil)
	endA()
	bp.barsMu.Lock()
	assert.NotContains(t, bp.bars, "kw0", "kw0 is done: its bar is finished while kw1 still sends")
	assert.Contains(t, bp.bars, "kw1")
	bp.barsMu.Unlock()
	endA() // a second call changes nothing
	bp.mu.Lock()
	assert.Equal(t, 1, bp.open)
	bp.mu.Unlock()
	b.Add(10)
	b.Done(nil)
	endB()
	assert.Contains(t, lastLineOf(out.String(), "[kw0]"), "10.0 b / 10.0 b")
	assert.Contains(t, lastLineOf(out.String(), "[kw1]"), "10.0 b / 10.0 b")
}

func TestUploadProgressBarsOnlyWhereTheyCanRedraw(t *testing.T) {
	tty := ptytest.Open(t)
	env := map[string]string{"TERM": "xterm-256color"}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		args []string
		err  io.Writer
		want string
	}{
		{"a terminal", nil, tty, "bars"},
		{"--no-color", []string{"--no-color"}, tty, "lines"},
		{"a pipe or a file", nil, &bytes.Buffer{}, "lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := NewRootCommand(&strings.Builder{}, &strings.Builder{}, func(string) (string, bool) { return "", false })
			require.NoError(t, root.ParseFlags(tc.args))
			app := &App{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
			app.Err = tc.err
			switch p := uploadProgress(root, app, log).(type) {
			case *barProgress:
				assert.Equal(t, "bars", tc.want)
			case *lineProgress:
				assert.Equal(t, "lines", tc.want)
			default:
				t.Fatalf("got %T", p)
			}
		})
	}
	app := &App{Err: &bytes.Buffer{}}
	root := NewRootCommand(&strings.Builder{}, &strings.Builder{}, func(string) (string, bool) { return "", false })
	assert.Nil(t, uploadProgress(root, app, nil), "no logger: nothing shown")
}

func TestBarProgressDrawsNothingWhenNothingIsSent(t *testing.T) {
	var out syncBuffer
	bp := newBarProgress(&out)
	for _, host := range []string{"kw0", "kw1"} {
		end := bp.Begin(host) // every file already in place: no Start
		end()
	}
	bp.mu.Lock()
	assert.Nil(t, bp.p)
	assert.Zero(t, bp.open)
	bp.mu.Unlock()
	assert.Empty(t, out.String(), "a converged fleet shows no bar")
}
