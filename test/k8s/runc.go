package k8s

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// fetchRunc takes runc from Debian 12's runc package (runc needs cgo for
// its nsexec; Debian's is built with seccomp and links only libc and
// libseccomp2, which every Debian 12 host has) into out, and returns the
// package's version.
func fetchRunc(ctx context.Context, debs debCache, out string) (string, error) {
	paths, err := debs.fetch(ctx, []string{runcDeb})
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(out, ".extract-")
	if err != nil {
		return "", fmt.Errorf("runc: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := extractDebs(ctx, paths, tmp); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, "usr", "sbin", "runc"), filepath.Join(out, "runc")); err != nil {
		return "", fmt.Errorf("runc: the package has no usr/sbin/runc: %w", err)
	}
	return debVersion(paths[0]), nil
}
