package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// fileLock is an flock(2) on a file. flock is released by the kernel when the
// process dies, so a crashed test never leaves a lock behind that blocks the
// next run - which a lock *file* (O_EXCL) would.
type fileLock struct{ f *os.File }

// acquireLock takes an exclusive lock on path, waiting until ctx is done.
// When another process holds it, it says so once, so a test that sits behind
// a 5-minute rootfs build of another test does not look hung.
func acquireLock(ctx context.Context, path, what string, log *slog.Logger) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", what, err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &fileLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s (%s): %w", what, path, err)
		}
		if !said {
			log.Info(fmt.Sprintf("waiting: another process holds the %s lock (%s)", what, path))
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the %s lock (%s): %w", what, path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (l *fileLock) release() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
	}
}
