package image

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onBlob installs a fault on the registry for GETs of the blob d: answer
// gets the attempt number (1 for the first) and handles the request when
// it returns true.
func onBlob(fx *fixture, d string, answer func(n int, w http.ResponseWriter) bool) {
	var mu sync.Mutex
	n := 0
	fx.reg.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+d) {
			return false
		}
		mu.Lock()
		n++
		attempt := n
		mu.Unlock()
		return answer(attempt, w)
	})
}

func TestBlobCutShortIsFetchedAgain(t *testing.T) {
	fx := newFixture(t)
	ref := fx.reg.Ref("demo/single:1.0")
	m, err := fx.images[ref]["amd64"].Manifest()
	require.NoError(t, err)
	layer := m.Layers[0]
	onBlob(fx, layer.Digest.String(), func(n int, w http.ResponseWriter) bool {
		if n > 1 {
			return false
		}
		// promise the whole blob, send a few bytes, hang up
		w.Header().Set("Content-Length", strconv.FormatInt(layer.Size, 10))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("short"))
		return true
	})
	var log bytes.Buffer
	p := newPuller(t)
	p.Log = slog.New(slog.NewTextHandler(&log, nil))
	_, err = p.WriteArchive(t.Context(), io.Discard, []string{ref}, "amd64", "none")
	require.NoError(t, err)
	assert.Equal(t, 2, fx.reg.BlobGetCounts()[layer.Digest.String()])
	assert.Contains(t, log.String(), `level=WARN msg="blob transfer failed, retrying" image=`+ref+" blob="+layer.Digest.String()+" attempt=1 in=1s error=")
}

func TestBlobRefusedIsNotFetchedAgain(t *testing.T) {
	fx := newFixture(t)
	ref := fx.reg.Ref("demo/single:1.0")
	m, err := fx.images[ref]["amd64"].Manifest()
	require.NoError(t, err)
	d := m.Layers[0].Digest.String()
	onBlob(fx, d, func(_ int, w http.ResponseWriter) bool {
		http.Error(w, `{"errors":[{"code":"DENIED","message":"no"}]}`, http.StatusForbidden)
		return true
	})
	_, err = newPuller(t).WriteArchive(t.Context(), io.Discard, []string{ref}, "amd64", "none")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blob "+d)
	assert.Equal(t, 1, fx.reg.BlobGetCounts()[d], "a refusal is final")
}
