package fetch

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFetchDownloadsAndVerifies(t *testing.T) {
	content := randomBytes(t, 300_000)
	srv := newFileServer(t, content, nil)
	f := newFetcher(t)

	got, res, err := fetchBytes(t, f, Request{Source: srv.url("k3s"), Shasum: "sha256:" + strings.ToUpper(sha(content))})
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.Equal(t, sha(content), res.SHA256)
	assert.Equal(t, sha(content), res.SourceSHA256)
	assert.Equal(t, int64(len(content)), res.Size)
	assert.False(t, res.Cached, "a first fetch downloads")
	assert.Equal(t, 1, srv.requests())
	assert.Empty(t, dirEntries(t, f.Cache.Dir()+"/tmp"), "the temporary download was renamed into place")
}

// Creating the same definition again must download nothing: the URL's
// index entry points at a verified blob, in the same process and in a new
// one (a new Cache over the same directory).
func TestFetchCacheHitDownloadsNothing(t *testing.T) {
	content := randomBytes(t, 100_000)
	srv := newFileServer(t, content, nil)
	f := newFetcher(t)
	req := Request{Source: srv.url("rke2.tar.gz")}

	_, first, err := fetchBytes(t, f, req)
	require.NoError(t, err)
	require.Equal(t, 1, srv.requests())

	again, second, err := fetchBytes(t, f, req)
	require.NoError(t, err)
	assert.Equal(t, content, again)
	assert.True(t, second.Cached)
	assert.Equal(t, first.SHA256, second.SHA256)

	reopened, err := NewCache(f.Cache.Dir())
	require.NoError(t, err)
	fresh := &Fetcher{Cache: reopened}
	_, third, err := fetchBytes(t, fresh, req)
	require.NoError(t, err)
	assert.True(t, third.Cached)
	// A known shasum is enough to find the blob, whatever the URL.
	_, fourth, err := fetchBytes(t, fresh, Request{Source: srv.url("mirror/other-name"), Shasum: first.SHA256})
	require.NoError(t, err)
	assert.True(t, fourth.Cached)

	assert.Equal(t, 1, srv.requests(), "cache hits must not reach the server")
}

// Refresh re-downloads a URL without a shasum: its content may have moved.
func TestFetchRefreshDownloadsMovingURLAgain(t *testing.T) {
	srv := newFileServer(t, []byte("release 1"), nil)
	f := newFetcher(t)
	req := Request{Source: srv.url("latest/k3s")}
	_, first, err := fetchBytes(t, f, req)
	require.NoError(t, err)

	srv.content = []byte("release 2")
	got, _, err := fetchBytes(t, f, req)
	require.NoError(t, err)
	assert.Equal(t, "release 1", string(got), "without Refresh the URL is pinned to what it gave first")

	f.Refresh = true
	got, res, err := fetchBytes(t, f, req)
	require.NoError(t, err)
	assert.Equal(t, "release 2", string(got))
	assert.False(t, res.Cached)
	assert.Equal(t, 2, srv.requests())

	// With a shasum the blob is found by digest, Refresh or not.
	_, pinned, err := fetchBytes(t, f, Request{Source: srv.url("latest/k3s"), Shasum: first.SHA256})
	require.NoError(t, err)
	assert.True(t, pinned.Cached)
	assert.Equal(t, 2, srv.requests())
}

// A cached blob that no longer hashes to its digest is not served: it is
// dropped and downloaded again.
func TestFetchCorruptedCacheEntryIsDownloadedAgain(t *testing.T) {
	content := randomBytes(t, 10_000)
	srv := newFileServer(t, content, nil)
	f := newFetcher(t)
	req := Request{Source: srv.url("file")}
	_, res, err := fetchBytes(t, f, req)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(f.Cache.BlobPath(res.SHA256), []byte("bit rot"), 0o600))
	reopened, err := NewCache(f.Cache.Dir())
	require.NoError(t, err)
	got, res2, err := fetchBytes(t, &Fetcher{Cache: reopened}, req)
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.False(t, res2.Cached)
	assert.Equal(t, 2, srv.requests())
}

func TestFetchClientErrorsFailAtOnce(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusUnauthorized} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			srv := newFileServer(t, []byte("x"), func(s *fileServer) {
				s.status = func(int) int { return code }
			})
			f := newFetcher(t)
			_, _, err := fetchBytes(t, f, Request{Source: srv.url("missing.tar.gz")})
			require.Error(t, err)
			assert.Contains(t, err.Error(), srv.url("missing.tar.gz"))
			assert.Contains(t, err.Error(), http.StatusText(code))
			var se *StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, code, se.Code)
			assert.Equal(t, 1, srv.requests(), "a %d is not retried", code)
			requireNoPartials(t, f.Cache)
		})
	}
}

func TestFetchRetriesServerErrors(t *testing.T) {
	content := randomBytes(t, 5000)
	srv := newFileServer(t, content, func(s *fileServer) {
		s.status = func(n int) int {
			switch n {
			case 1:
				return http.StatusServiceUnavailable
			case 2:
				return http.StatusTooManyRequests
			}
			return 0
		}
	})
	got, res, err := fetchBytes(t, newFetcher(t), Request{Source: srv.url("f"), Shasum: sha(content)})
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.Equal(t, sha(content), res.SHA256)
	assert.Equal(t, 3, srv.requests())
}

func TestFetchResumesDroppedConnectionWithRange(t *testing.T) {
	content := randomBytes(t, 1<<20)
	cut := 300_000
	srv := newFileServer(t, content, func(s *fileServer) {
		s.cutAt = func(n int) int {
			if n == 1 {
				return cut
			}
			return -1
		}
	})
	f := newFetcher(t)
	got, res, err := fetchBytes(t, f, Request{Source: srv.url("big"), Shasum: sha(content)})
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.Equal(t, sha(content), res.SHA256)
	require.Equal(t, 2, srv.requests())
	assert.Equal(t, []string{"", "bytes=300000-"}, srv.rangeHeaders(), "the second attempt resumes where the first stopped")
}

// A server that cannot resume is read again from the start, and the
// result is still the exact file.
func TestFetchRestartsWhenServerIgnoresRange(t *testing.T) {
	content := randomBytes(t, 200_000)
	srv := newFileServer(t, content, func(s *fileServer) {
		s.noRange = true
		s.cutAt = func(n int) int {
			if n == 1 {
				return 50_000
			}
			return -1
		}
	})
	got, _, err := fetchBytes(t, newFetcher(t), Request{Source: srv.url("big"), Shasum: sha(content)})
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.Equal(t, 2, srv.requests())
}

func TestFetchGivesUpOnServerThatAlwaysDrops(t *testing.T) {
	content := randomBytes(t, 100_000)
	srv := newFileServer(t, content, func(s *fileServer) {
		s.cutAt = func(int) int { return 40_000 }
	})
	f := newFetcher(t) // Retries: 2
	_, _, err := fetchBytes(t, f, Request{Source: srv.url("flaky")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), srv.url("flaky"))
	assert.Contains(t, err.Error(), "giving up after 4 attempts")
	// The first attempt made progress; then three without progress: the
	// retries are spent and nothing more is tried.
	assert.Equal(t, 4, srv.requests())
	requireNoPartials(t, f.Cache)
}

func TestFetchRetriesStalledTransfer(t *testing.T) {
	content := randomBytes(t, 100_000)
	srv := newFileServer(t, content, func(s *fileServer) {
		s.stallAt = func(n int) int {
			if n == 1 {
				return 10_000
			}
			return -1
		}
	})
	f := newFetcher(t)
	f.StallTimeout = 200 * time.Millisecond
	got, _, err := fetchBytes(t, f, Request{Source: srv.url("slow")})
	require.NoError(t, err)
	assert.Equal(t, content, got)
	assert.Equal(t, []string{"", "bytes=10000-"}, srv.rangeHeaders())
}

func TestFetchShasumMismatch(t *testing.T) {
	content := []byte("the real file")
	expected := sha([]byte("what the definition expected"))
	srv := newFileServer(t, content, nil)
	f := newFetcher(t)

	_, _, err := fetchBytes(t, f, Request{Source: srv.url("k3s"), Shasum: expected})
	var mm *MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, srv.url("k3s"), mm.Source)
	assert.Equal(t, expected, mm.Expected)
	assert.Equal(t, sha(content), mm.Actual)
	for _, want := range []string{srv.url("k3s"), expected, sha(content)} {
		assert.Contains(t, err.Error(), want)
	}
	requireNoPartials(t, f.Cache)
}

func TestFetchRejectsMalformedShasum(t *testing.T) {
	f := newFetcher(t)
	_, _, err := fetchBytes(t, f, Request{Source: "https://example.invalid/x", Shasum: "md5:abc"})
	require.ErrorContains(t, err, "only sha256")
	_, _, err = fetchBytes(t, f, Request{Source: "https://example.invalid/x", Shasum: "1234"})
	require.ErrorContains(t, err, "not a sha256 digest")
}

func TestFetchRedactsCredentials(t *testing.T) {
	srv := newFileServer(t, []byte("x"), func(s *fileServer) {
		s.status = func(int) int { return http.StatusNotFound }
	})
	u := strings.Replace(srv.url("f"), "http://", "http://user:s3cret@", 1)
	_, _, err := fetchBytes(t, newFetcher(t), Request{Source: u})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret")
	assert.Contains(t, err.Error(), "user:xxxxx@")
}

func TestFetchHonoursContextCancellation(t *testing.T) {
	srv := newFileServer(t, []byte("x"), func(s *fileServer) {
		s.status = func(int) int { return http.StatusBadGateway }
	})
	f := newFetcher(t)
	f.Backoff = time.Hour
	ctx, cancel := contextWithTimeout(t, 100*time.Millisecond)
	defer cancel()
	_, err := f.Fetch(ctx, Request{Source: srv.url("f")}, &strings.Builder{})
	require.Error(t, err)
	require.ErrorIs(t, err, ctx.Err())
	assert.Equal(t, 1, srv.requests())
}
