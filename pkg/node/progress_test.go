package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// recordedProgress keeps what the upload path reported.
type recordedProgress struct {
	mu       sync.Mutex
	starts   []recordedTransfer
	batches  map[string]int // open batches per host
	maxOpen  int
	closedAt []int // open batches left when one ended
}

type recordedTransfer struct {
	host, name string
	size       int64
	added      int64
	done       bool
	err        error
}

func (r *recordedProgress) Start(h, name string, size int64) Tracker {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, recordedTransfer{host: h, name: name, size: size})
	return &recordedTracker{r: r, i: len(r.starts) - 1}
}

func (r *recordedProgress) Begin(h string) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.batches == nil {
		r.batches = map[string]int{}
	}
	r.batches[h]++
	r.maxOpen = max(r.maxOpen, r.batches[h])
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.batches[h]--
		r.closedAt = append(r.closedAt, r.batches[h])
	}
}

type recordedTracker struct {
	r *recordedProgress
	i int
}

func (t *recordedTracker) Add(n int64) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.r.starts[t.i].added += n
}

func (t *recordedTracker) Done(err error) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.r.starts[t.i].done, t.r.starts[t.i].err = true, err
}

func placementOf(name, target string, body []byte) Placement {
	sum := sha256.Sum256(body)
	return Placement{
		Name: name, Target: target, Mode: 0o644, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
	}
}

func TestPlaceReportsTheBytesItSends(t *testing.T) {
	r, root := hostRoot(t)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r}
	s := &Fleet{Report: &Report{}}
	rec := &recordedProgress{}
	ctx := WithProgress(context.Background(), rec)
	body := bytes.Repeat([]byte("images "), 300_000) // 2.1 MB: many reads
	pl := placementOf("images/images-amd64.tar.zst", "/var/lib/rancher/k3s/agent/images/images-amd64.tar.zst", body)

	require.NoError(t, s.PlaceAll(ctx, h, "Upload files to hosts", []Placement{pl}))
	require.Len(t, rec.starts, 1)
	got := rec.starts[0]
	assert.Equal(t, "kw0", got.host)
	assert.Equal(t, pl.Name, got.name)
	assert.Equal(t, int64(len(body)), got.size, "a fresh upload sends the whole file")
	assert.Equal(t, int64(len(body)), got.added, "every byte sent is counted, once")
	assert.True(t, got.done)
	require.NoError(t, got.err)
	assert.Equal(t, 2, rec.maxOpen, "PlaceAll's batch holds Place's")
	assert.Equal(t, []int{1, 0}, rec.closedAt, "every batch ends")

	// Already there: nothing is sent, so nothing is shown.
	_, err := s.Place(ctx, h, pl)
	require.NoError(t, err)
	assert.Len(t, rec.starts, 1, "a skipped upload starts no transfer")

	// A broken transfer's prefix waits in the part file: only the rest
	// is sent, and only the rest is counted.
	dst := filepath.Join(root, "var/lib/rancher/k3s/agent/images/other.tar.zst")
	require.NoError(t, os.WriteFile(dst+host.PartSuffix, body[:1_000_000], 0o600))
	pl2 := placementOf("images/other.tar.zst", "/var/lib/rancher/k3s/agent/images/other.tar.zst", body)
	p, err := s.Place(ctx, h, pl2)
	require.NoError(t, err)
	require.Equal(t, int64(len(body)-1_000_000), p.sent, "the upload resumed")
	require.Len(t, rec.starts, 2)
	assert.Equal(t, int64(len(body)-1_000_000), rec.starts[1].size)
	assert.Equal(t, int64(len(body)-1_000_000), rec.starts[1].added)
	onHost, err := os.ReadFile(dst)
	require.NoError(t, err)
	assert.Equal(t, body, onHost)
}

func TestPlaceReportsAFailedTransfer(t *testing.T) {
	r, _ := hostRoot(t)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r}
	rec := &recordedProgress{}
	ctx := WithProgress(context.Background(), rec)
	pl := placementOf("files/0/cfg", "/etc/cargoship/cfg", []byte("the recorded content"))
	pl.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte("short"))), nil }

	_, err := (&Fleet{}).Place(ctx, h, pl)
	require.Error(t, err)
	require.Len(t, rec.starts, 1)
	assert.Equal(t, int64(5), rec.starts[0].added)
	assert.True(t, rec.starts[0].done)
	assert.Error(t, rec.starts[0].err, "the tracker hears the upload failed")
}

func TestPlaceWithoutProgressShowsNothing(t *testing.T) {
	r, root := hostRoot(t)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r}
	pl := placementOf("files/0/cfg", "/etc/cargoship/cfg", []byte("content"))
	_, err := (&Fleet{}).Place(context.Background(), h, pl)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, "etc/cargoship/cfg"))
	require.NoError(t, err)
	assert.Equal(t, "content", string(got))
}

func TestPlanAllGivesHumanSizes(t *testing.T) {
	r, _ := hostRoot(t)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r}
	big := placementOf("images/a.tar.zst", "/var/lib/a.tar.zst", nil)
	big.Size = 83_361_792 // only the size is printed
	small := placementOf("files/0/cfg", "/etc/cargoship/cfg", []byte("twelve bytes"))
	changes, err := (&Fleet{}).PlanAll(context.Background(), h, []Placement{big, small})
	require.NoError(t, err)
	require.Len(t, changes, 2)
	assert.Equal(t, "upload images/a.tar.zst to /var/lib/a.tar.zst (79.5 MiB, -rw-r--r--)", changes[0].What)
	assert.Equal(t, "upload files/0/cfg to /etc/cargoship/cfg (12 bytes, -rw-r--r--)", changes[1].What)
}
