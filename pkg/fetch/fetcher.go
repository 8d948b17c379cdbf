package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"
)

// Fetcher brings a definition's files into the package: downloads through
// the Cache, local files as they are, entries out of archives.
type Fetcher struct {
	// Cache holds downloads and extracted entries. Required for URLs and
	// for extractPath; a local file without extractPath does not need it.
	Cache *Cache
	// Client makes the requests; nil is http.DefaultClient. A whole
	// download is bounded by the context, not by a client timeout.
	Client *http.Client
	// Retries is how often a transient failure that made no progress is
	// retried: 0 means DefaultRetries, negative means never.
	Retries int
	// Backoff is the first wait between attempts, doubled each time up to
	// 30s; 0 means DefaultBackoff.
	Backoff time.Duration
	// StallTimeout ends an attempt that receives nothing for this long;
	// 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// Log receives one line per download; nil discards.
	Log *slog.Logger
	// Progress shows downloads as they run; nil shows nothing.
	Progress Progress
	// Refresh downloads URLs that have no Shasum again instead of trusting
	// what the URL gave last time (for sources that move, like "latest").
	// A URL with a Shasum is still answered from the cache.
	Refresh bool
}

// Request is one file to fetch.
type Request struct {
	// Source is an http(s) URL, a file:// URL or a local path. A relative
	// path is taken relative to BaseDir.
	Source  string
	BaseDir string
	// Shasum is the expected sha256 (hex, or "sha256:<hex>") of the fetched
	// source, before any extraction; "" is not checked.
	Shasum string
	// ExtractPath names an entry inside a tar, tar.gz/tgz, tar.zst or
	// zip archive to take instead of the whole file.
	ExtractPath string
}

// Result describes what was fetched.
type Result struct {
	// SHA256 and Size describe the bytes delivered: the extracted entry
	// when ExtractPath is set, otherwise the source itself.
	SHA256 string
	Size   int64
	// SourceSHA256 is the sha256 of the source (the archive, when
	// extracting).
	SourceSHA256 string
	// Cached is true when nothing was downloaded: a local file, or a URL
	// answered from the cache.
	Cached bool
}

// Fetch streams the requested file (or the extracted entry) into w. The
// source is verified against Shasum before anything is written; on an error
// w may hold a partial copy and must be discarded.
func (f *Fetcher) Fetch(ctx context.Context, req Request, w io.Writer) (Result, error) {
	p, res, err := f.Materialize(ctx, req)
	if err != nil {
		return Result{}, err
	}
	file, err := os.Open(p)
	if err != nil {
		return Result{}, fmt.Errorf("fetch %s: %w", displaySource(req), err)
	}
	defer file.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), file)
	if err != nil {
		return Result{}, fmt.Errorf("fetch %s: copying %s: %w", displaySource(req), p, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != res.SHA256 || n != res.Size {
		return Result{}, fmt.Errorf("fetch %s: %s changed while it was read (sha256 %s, %d bytes; expected %s, %d bytes)",
			displaySource(req), p, got, n, res.SHA256, res.Size)
	}
	return res, nil
}

// Materialize is Fetch into a local file: it returns the path of a verified
// copy with the requested bytes and what they are. For a URL or an extracted
// entry the path is inside the cache; for a whole local file it is the file
// itself. Callers must not modify the file.
func (f *Fetcher) Materialize(ctx context.Context, req Request) (string, Result, error) {
	expected, err := ParseSHA256(req.Shasum)
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", displaySource(req), err)
	}
	var entry string
	if req.ExtractPath != "" {
		if entry, err = cleanEntryPath(req.ExtractPath); err != nil {
			return "", Result{}, fmt.Errorf("fetch %s: %w", displaySource(req), err)
		}
	}
	src, err := resolveSource(req.Source, req.BaseDir)
	if err != nil {
		return "", Result{}, err
	}
	var srcPath string
	var res Result
	if src.url != nil {
		srcPath, res, err = f.remote(ctx, src.url, expected)
	} else {
		srcPath, res, err = local(src.path, expected)
	}
	if err != nil {
		return "", Result{}, err
	}
	if entry == "" {
		return srcPath, res, nil
	}
	return f.extract(srcPath, src.display(), entry, res)
}

// remote answers a URL from the cache or downloads it into the cache.
func (f *Fetcher) remote(ctx context.Context, u *url.URL, expected string) (string, Result, error) {
	if f.Cache == nil {
		return "", Result{}, fmt.Errorf("fetch %s: no cache configured for downloads", u.Redacted())
	}
	key := "url:" + u.String()
	if p, res, ok, err := f.cached(key, expected); err != nil || ok {
		if ok {
			f.logger().Debug("download answered from cache", "url", u.Redacted(), "sha256", res.SHA256)
		}
		return p, res, err
	}

	bw, err := f.Cache.Create()
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	defer bw.Abort()
	start := time.Now()
	if err := f.download(ctx, u, bw); err != nil {
		return "", Result{}, err
	}
	sum, size, err := bw.Commit(expected)
	if mm := (*MismatchError)(nil); errors.As(err, &mm) {
		mm.Source = u.Redacted()
		return "", Result{}, mm
	}
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	if err := f.Cache.Record(key, u.Redacted(), sum, size); err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	f.logger().Info("downloaded", "url", u.Redacted(), "bytes", size, "sha256", sum,
		"took", time.Since(start).Round(time.Millisecond))
	return f.Cache.BlobPath(sum), Result{SHA256: sum, Size: size, SourceSHA256: sum}, nil
}

// cached finds a verified blob for a URL: the expected digest itself (the
// same file from another mirror counts), or what the URL gave last time.
func (f *Fetcher) cached(key, expected string) (string, Result, bool, error) {
	candidates := []string{}
	if expected != "" {
		candidates = append(candidates, expected)
	} else if e, ok := f.Cache.Lookup(key); ok && !f.Refresh {
		candidates = append(candidates, e.SHA256)
	}
	for _, sum := range candidates {
		ok, err := f.Cache.Verify(sum)
		if err != nil {
			return "", Result{}, false, err
		}
		if !ok {
			continue
		}
		size, _ := f.Cache.Stat(sum)
		return f.Cache.BlobPath(sum), Result{SHA256: sum, Size: size, SourceSHA256: sum, Cached: true}, true, nil
	}
	return "", Result{}, false, nil
}

// local hashes a local file and checks it against the expected digest.
func local(p, expected string) (string, Result, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", Result{}, fmt.Errorf("fetch: local file %s does not exist", p)
	}
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch: local file %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return "", Result{}, fmt.Errorf("fetch: local file %s is not a regular file", p)
	}
	sum, size, err := HashFile(p)
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch: local file %s: %w", p, err)
	}
	if expected != "" && sum != expected {
		return "", Result{}, &MismatchError{Source: p, Expected: expected, Actual: sum}
	}
	return p, Result{SHA256: sum, Size: size, SourceSHA256: sum, Cached: true}, nil
}

// extract takes entry out of the verified archive at srcPath into the cache,
// remembering the result by the archive's digest so the next run does not
// extract again.
func (f *Fetcher) extract(srcPath, display, entry string, src Result) (string, Result, error) {
	if f.Cache == nil {
		return "", Result{}, fmt.Errorf("fetch %s: no cache configured for extraction", display)
	}
	key := "extract:" + src.SourceSHA256 + ":" + entry
	if e, ok := f.Cache.Lookup(key); ok {
		if ok, err := f.Cache.Verify(e.SHA256); err != nil {
			return "", Result{}, err
		} else if ok {
			return f.Cache.BlobPath(e.SHA256), Result{SHA256: e.SHA256, Size: e.Size, SourceSHA256: src.SourceSHA256, Cached: src.Cached}, nil
		}
	}
	bw, err := f.Cache.Create()
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", display, err)
	}
	defer bw.Abort()
	if err := extractEntry(srcPath, display, entry, bw); err != nil {
		return "", Result{}, err
	}
	sum, size, err := bw.Commit("")
	if err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", display, err)
	}
	if err := f.Cache.Record(key, display+"#"+entry, sum, size); err != nil {
		return "", Result{}, fmt.Errorf("fetch %s: %w", display, err)
	}
	f.logger().Debug("extracted", "archive", display, "entry", entry, "bytes", size, "sha256", sum)
	return f.Cache.BlobPath(sum), Result{SHA256: sum, Size: size, SourceSHA256: src.SourceSHA256, Cached: src.Cached}, nil
}

func (f *Fetcher) logger() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.New(slog.DiscardHandler)
}

// displaySource names a request's source for errors without credentials.
func displaySource(req Request) string {
	if u, err := url.Parse(req.Source); err == nil && u.User != nil {
		return u.Redacted()
	}
	return req.Source
}
