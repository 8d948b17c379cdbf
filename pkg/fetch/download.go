package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/version"
)

// Defaults for a zero Fetcher.
const (
	DefaultRetries      = 4
	DefaultBackoff      = time.Second
	DefaultStallTimeout = 2 * time.Minute
	maxBackoff          = 30 * time.Second
	maxRetryAfter       = 2 * time.Minute
)

// errStalled ends an attempt whose body stopped arriving.
var errStalled = errors.New("no data received within the stall timeout")

// StatusError is an HTTP response that is not a success.
type StatusError struct {
	URL    string // redacted
	Status string
	Code   int
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: %s", e.URL, e.Status) }

// permanent reports whether retrying cannot help: client errors other than
// timeouts and rate limits.
func (e *StatusError) permanent() bool {
	return e.Code >= 400 && e.Code < 500 && e.Code != http.StatusRequestTimeout && e.Code != http.StatusTooManyRequests
}

// downloadState carries what one attempt learns for the next.
type downloadState struct {
	validator  string        // strong ETag or Last-Modified, for If-Range
	total      int64         // full size, -1 when unknown
	retryAfter time.Duration // server's Retry-After on the last attempt
	task       ProgressTask
}

// download fetches u into bw. A transient failure (network error, body cut
// short, 5xx, 408, 429, stall) is retried with exponential backoff,
// resuming from the bytes already written with a Range request; a server
// that ignores Range is read again from the start. An attempt that moves the
// download forward does not count against the retries. Other 4xx statuses
// fail at once.
func (f *Fetcher) download(ctx context.Context, u *url.URL, bw *BlobWriter) (err error) {
	st := &downloadState{total: -1}
	defer func() {
		if st.task != nil {
			st.task.Done(err)
		}
	}()
	retries := f.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	failures, attempts := 0, 0
	for {
		attempts++
		before := bw.Size()
		st.retryAfter = 0
		err := f.attempt(ctx, u, bw, st)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("download %s: %w", u.Redacted(), context.Cause(ctx))
		}
		if se := (*StatusError)(nil); errors.As(err, &se) && se.permanent() {
			return err
		}
		if bw.Size() > before {
			failures = 0
		} else {
			failures++
		}
		if failures > retries {
			return fmt.Errorf("download %s: giving up after %d attempts: %w", u.Redacted(), attempts, err)
		}
		wait := f.backoff(failures)
		if st.retryAfter > wait {
			wait = st.retryAfter
		}
		f.logger().Warn("download failed, retrying", "url", u.Redacted(), "attempt", attempts,
			"received", bw.Size(), "wait", wait, "error", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("download %s: %w", u.Redacted(), context.Cause(ctx))
		case <-time.After(wait):
		}
	}
}

func (f *Fetcher) backoff(failures int) time.Duration {
	d := f.Backoff
	if d <= 0 {
		d = DefaultBackoff
	}
	for i := 1; i < failures && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// attempt is one GET, resuming at bw.Size() when bytes are already there.
func (f *Fetcher) attempt(ctx context.Context, u *url.URL, bw *BlobWriter, st *downloadState) error {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := f.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	watchdog := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer watchdog.Stop()

	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", "cargoship/"+version.String())
	offset := bw.Size()
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
		if st.validator != "" {
			req.Header.Set("If-Range", st.validator)
		}
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return attemptError(actx, u, err)
	}
	defer resp.Body.Close()

	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			// Not the bytes asked for: start over rather than splice.
			if err := f.restart(bw, st); err != nil {
				return err
			}
			return fmt.Errorf("GET %s: server answered range %q for bytes=%d-", u.Redacted(), resp.Header.Get("Content-Range"), offset)
		}
		if total >= 0 {
			st.total = total
		}
		if st.validator == "" {
			st.validator = validator(resp.Header)
		}
	case http.StatusOK:
		if offset > 0 {
			if err := f.restart(bw, st); err != nil {
				return err
			}
		}
		st.total = resp.ContentLength
		st.validator = validator(resp.Header)
	case http.StatusRequestedRangeNotSatisfiable:
		if err := f.restart(bw, st); err != nil {
			return err
		}
		return &StatusError{URL: u.Redacted(), Status: resp.Status, Code: resp.StatusCode}
	default:
		st.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
		return &StatusError{URL: u.Redacted(), Status: resp.Status, Code: resp.StatusCode}
	}

	if st.task == nil && f.Progress != nil {
		st.task = f.Progress.Start(path.Base(u.Path), st.total)
	}
	if st.task != nil {
		setProgress(st.task, bw.Size())
	}
	var dst io.Writer = bw
	if st.task != nil {
		dst = io.MultiWriter(bw, st.task)
	}
	body := &stallReader{r: resp.Body, timer: watchdog, d: stall}
	if _, err := io.Copy(dst, body); err != nil {
		return attemptError(actx, u, err)
	}
	if st.total >= 0 && bw.Size() != st.total {
		return fmt.Errorf("GET %s: got %d of %d bytes", u.Redacted(), bw.Size(), st.total)
	}
	return nil
}

// restart empties a partial download whose server cannot resume it.
func (f *Fetcher) restart(bw *BlobWriter, st *downloadState) error {
	if err := bw.Reset(); err != nil {
		return err
	}
	if st.task != nil {
		setProgress(st.task, 0)
	}
	return nil
}

// attemptError names the URL and says why an attempt stopped.
func attemptError(actx context.Context, u *url.URL, err error) error {
	if cause := context.Cause(actx); errors.Is(cause, errStalled) {
		return fmt.Errorf("GET %s: %w", u.Redacted(), errStalled)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // url.Error repeats the unredacted URL
	}
	return fmt.Errorf("GET %s: %w", u.Redacted(), err)
}

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return http.DefaultClient
}

// validator returns what If-Range may carry: a strong ETag, else Last-Modified.
func validator(h http.Header) string {
	if etag := h.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
		return etag
	}
	return h.Get("Last-Modified")
}

// parseContentRange reads "bytes start-end/total" (total may be "*").
func parseContentRange(s string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, total, true
}

// parseRetryAfter reads a delay in seconds or an HTTP date, capped.
func parseRetryAfter(s string) time.Duration {
	if s == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(s); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(s); err == nil {
		d = time.Until(t)
	}
	return max(0, min(d, maxRetryAfter))
}

// stallReader pushes the stall watchdog back on every read that brings data.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	return n, err
}
