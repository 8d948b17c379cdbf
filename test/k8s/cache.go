package k8s

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// CacheRoot is where builds are kept: os.UserCacheDir()/cargoship/k8s, or
// $CARGOSHIP_K8S_CACHE when set (docs/reference/kubernetes-build.md §5).
func CacheRoot() (string, error) {
	if d := os.Getenv("CARGOSHIP_K8S_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("k8s build cache: %w", err)
	}
	return filepath.Join(base, "cargoship", "k8s"), nil
}

// stampName marks a directory as complete: it is written last, so a
// directory without it is a build that was cut short and is redone.
const stampName = ".complete"

// complete reports whether dir was finished.
func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, stampName))
	return err == nil
}

// markComplete writes dir's stamp with content (what was built, for a
// person looking at the cache).
func markComplete(dir string, content []byte) error {
	if err := os.WriteFile(filepath.Join(dir, stampName), content, 0o644); err != nil {
		return fmt.Errorf("stamp %s: %w", dir, err)
	}
	return nil
}

// fresh empties dir of a build that was cut short and creates it.
func fresh(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove unfinished %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// lockPoll is how often a waiting builder tries the lock again.
const lockPoll = 500 * time.Millisecond

// lock takes an exclusive flock on path (created if missing), waiting
// while another process holds it, until ctx ends. The returned function
// releases it.
func lock(ctx context.Context, path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for the build lock %s (another process is building): %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
