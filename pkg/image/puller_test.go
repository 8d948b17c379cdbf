package image

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A registry that is neither loopback nor private is reached over HTTPS
// unless Insecure says otherwise; Transport carries every request. The
// transport here is a real http.Transport whose dialer sends the made-up
// registry host to the in-process server.
func TestPullerInsecureAndTransport(t *testing.T) {
	fx := newFixture(t)
	var mu sync.Mutex
	dials := 0
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		mu.Lock()
		dials++
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, fx.reg.Host)
	}}
	ref := "mirror.cargoship.example:5000/demo/app-a:1.0"

	_, err := (&Puller{CacheDir: t.TempDir(), Transport: transport}).WriteArchive(t.Context(), io.Discard, []string{ref}, "amd64", "none")
	require.Error(t, err, "without Insecure the registry is spoken to over HTTPS")
	assert.Contains(t, err.Error(), ref)

	sum, err := (&Puller{CacheDir: t.TempDir(), Transport: transport, Insecure: true}).WriteArchive(t.Context(), io.Discard, []string{ref}, "amd64", "none")
	require.NoError(t, err)
	want := expectedSummary(t, ref, fx.images[fx.reg.Ref("demo/app-a:1.0")]["amd64"])
	assert.Equal(t, []ImageSummary{want}, sum.Images)
	mu.Lock()
	defer mu.Unlock()
	assert.Positive(t, dials)
}

// blobProgress is a test double for a progress display that totals what
// each transfer reported.
type blobProgress struct {
	mu    sync.Mutex
	bytes map[string]int64
	done  int
}

type blobTask struct {
	p    *blobProgress
	name string
}

func (b *blobProgress) Start(name string, _ int64) fetch.ProgressTask {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bytes[name] = 0
	return &blobTask{p: b, name: name}
}

func (t *blobTask) Write(p []byte) (int, error) {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.p.bytes[t.name] += int64(len(p))
	return len(p), nil
}

func (t *blobTask) Done(error) {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.p.done++
}

func TestPullerReportsBlobTransfers(t *testing.T) {
	fx := newFixture(t)
	ref := fx.reg.Ref("demo/app-b:2.0")
	prog := &blobProgress{bytes: map[string]int64{}}
	p := &Puller{CacheDir: t.TempDir(), Progress: prog}
	_, sum := writeTo(t, p, []string{ref}, "arm64", "none")

	img := fx.images[ref]["arm64"]
	m, err := img.Manifest()
	require.NoError(t, err)
	want := map[string]int64{m.Config.Digest.Hex[:12] + " " + ref: m.Config.Size}
	for _, l := range m.Layers {
		want[l.Digest.Hex[:12]+" "+ref] = l.Size
	}
	assert.Equal(t, want, prog.bytes, "one transfer per blob, each reporting every byte")
	assert.Equal(t, len(want), prog.done)
	assert.Equal(t, sum.Images[0].Size, m.Config.Size+m.Layers[0].Size+m.Layers[1].Size+m.Layers[2].Size)

	// Cached blobs are not transfers.
	_, _ = writeTo(t, p, []string{ref}, "arm64", "none")
	assert.Equal(t, len(want), prog.done)
}
