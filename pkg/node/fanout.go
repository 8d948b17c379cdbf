package node

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// HostErrors collects per-host failures so one bad host does not hide the
// others. It unwraps to every host's error, so errors.Is finds a
// cancellation through it.
type HostErrors struct {
	errs map[string]error
}

func (e *HostErrors) Error() string {
	names := e.Hosts()
	if len(names) == 1 {
		return fmt.Sprintf("%s: %v", names[0], e.errs[names[0]])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "failed on %d hosts:", len(names))
	for _, n := range names {
		fmt.Fprintf(&b, "\n - %s: %v", n, e.errs[n])
	}
	return b.String()
}

// Unwrap returns every host's error, in host name order.
func (e *HostErrors) Unwrap() []error {
	out := make([]error, 0, len(e.errs))
	for _, n := range e.Hosts() {
		out = append(out, e.errs[n])
	}
	return out
}

// Hosts returns the names of the hosts that failed.
func (e *HostErrors) Hosts() []string {
	out := make([]string, 0, len(e.errs))
	for n := range e.errs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Parallel runs fn on every host, at most limit at a time (0 means all at
// once), and returns every host's error, named. A host not yet started
// when ctx ends fails with ctx's error; one host failing stops no other.
func (hs Hosts) Parallel(ctx context.Context, limit int, fn func(context.Context, *Host) error) error {
	var (
		mu   sync.Mutex
		errs = map[string]error{}
		g    errgroup.Group
	)
	fail := func(h *Host, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs[h.String()] = err
	}
	if limit > 0 {
		g.SetLimit(limit)
	}
	for _, h := range hs {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				fail(h, err)
			} else if err := fn(ctx, h); err != nil {
				fail(h, err)
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through errs
	if len(errs) > 0 {
		return &HostErrors{errs: errs}
	}
	return nil
}

// Collect runs fn on every host like Parallel and joins what each host
// returned, in host order, whatever the hosts finish in.
func Collect[T any](ctx context.Context, hs Hosts, limit int, fn func(context.Context, *Host) ([]T, error)) ([]T, error) {
	per := make([][]T, len(hs))
	index := make(map[*Host]int, len(hs))
	for i, h := range hs {
		index[h] = i
	}
	err := hs.Parallel(ctx, limit, func(ctx context.Context, h *Host) error {
		out, err := fn(ctx, h)
		per[index[h]] = out // each goroutine writes its own slot
		return err
	})
	var all []T
	for _, out := range per {
		all = append(all, out...)
	}
	return all, err
}

// Batches runs fn on hosts in consecutive batches of size (0 means one
// batch); a failed batch stops the ones after it.
func (hs Hosts) Batches(ctx context.Context, size int, fn func(context.Context, *Host) error) error {
	if size <= 0 {
		size = len(hs)
	}
	for start := 0; start < len(hs); start += size {
		batch := hs[start:min(start+size, len(hs))]
		if err := batch.Parallel(ctx, size, fn); err != nil {
			return err
		}
	}
	return nil
}

// Sequential runs fn on each host in order, stopping at the first error.
func (hs Hosts) Sequential(ctx context.Context, fn func(context.Context, *Host) error) error {
	for _, h := range hs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, h); err != nil {
			return fmt.Errorf("%s: %w", h, err)
		}
	}
	return nil
}

// Map runs fn on every host like Parallel and keeps, per host, the value
// fn returns with keep set.
func Map[T any](ctx context.Context, hs Hosts, limit int, fn func(context.Context, *Host) (v T, keep bool, err error)) (map[*Host]T, error) {
	var mu sync.Mutex
	out := make(map[*Host]T, len(hs))
	err := hs.Parallel(ctx, limit, func(ctx context.Context, h *Host) error {
		v, keep, err := fn(ctx, h)
		if keep {
			mu.Lock()
			out[h] = v
			mu.Unlock()
		}
		return err
	})
	return out, err
}
