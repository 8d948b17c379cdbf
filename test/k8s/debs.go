package k8s

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kubeProxyDebs are the Debian 12 packages the kube-proxy image's iptables
// comes from: iptables and every library it links, with libc6 (and the
// libgcc it needs) and netbase's /etc/protocols and /etc/services
// (docs/reference/kubernetes-build.md §6).
var kubeProxyDebs = []string{
	"iptables", "libip4tc2", "libip6tc2", "libxtables12",
	"libmnl0", "libnetfilter-conntrack3", "libnfnetlink0", "libnftnl11",
	"libc6", "libgcc-s1", "netbase",
}

// runcDeb is the Debian package runc comes from.
const runcDeb = "runc"

// debCache keeps the .debs apt-get download fetched, one file per
// package, shared by every build.
type debCache struct{ dir string }

// fetch returns the .deb of each package, downloading (with apt-get
// download, the archive's candidate version) those the cache lacks. A
// failed download is tried once more after apt-get update.
func (c debCache) fetch(ctx context.Context, pkgs []string) ([]string, error) {
	unlock, err := lock(ctx, c.dir+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("deb cache: %w", err)
	}
	var missing []string
	for _, p := range pkgs {
		if _, ok, err := c.cached(p); err != nil {
			return nil, err
		} else if !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if err := c.download(ctx, missing); err != nil {
			slog.Info("apt-get download failed; updating the package lists", "packages", strings.Join(missing, " "), "err", err)
			if uerr := run(ctx, c.dir, "apt-get", "update"); uerr != nil {
				return nil, fmt.Errorf("%w (and apt-get update: %w)", err, uerr)
			}
			if err := c.download(ctx, missing); err != nil {
				return nil, err
			}
		}
	}
	paths := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		path, ok, err := c.cached(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("apt-get download %s left no %s_*.deb in %s", p, p, c.dir)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// cached finds the one .deb of pkg in the cache.
func (c debCache) cached(pkg string) (string, bool, error) {
	m, err := filepath.Glob(filepath.Join(c.dir, pkg+"_*_*.deb"))
	if err != nil {
		return "", false, fmt.Errorf("deb cache: %w", err)
	}
	switch len(m) {
	case 0:
		return "", false, nil
	case 1:
		return m[0], true, nil
	}
	return "", false, fmt.Errorf("deb cache %s holds %d versions of %s (%s): remove all but one", c.dir, len(m), pkg, strings.Join(m, " "))
}

// download runs apt-get download in the cache into a temporary directory
// first, so a cut-short download leaves no partial .deb in the cache.
func (c debCache) download(ctx context.Context, pkgs []string) error {
	tmp, err := os.MkdirTemp(c.dir, ".download-")
	if err != nil {
		return fmt.Errorf("deb cache: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	// apt as root drops to _apt for downloads, which must be able to write
	// the directory.
	_ = os.Chmod(tmp, 0o777)
	if err := run(ctx, tmp, "apt-get", append([]string{"download", "-q"}, pkgs...)...); err != nil {
		return err
	}
	debs, err := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if err != nil {
		return fmt.Errorf("deb cache: %w", err)
	}
	for _, d := range debs {
		if err := os.Rename(d, filepath.Join(c.dir, filepath.Base(d))); err != nil {
			return fmt.Errorf("deb cache: %w", err)
		}
	}
	return nil
}

// extractDebs unpacks each .deb's files into dir (dpkg-deb -x: no
// maintainer scripts run).
func extractDebs(ctx context.Context, debs []string, dir string) error {
	for _, d := range debs {
		if err := run(ctx, "", "dpkg-deb", "-x", d, dir); err != nil {
			return err
		}
	}
	return nil
}

// debVersion is the version in a .deb's file name (pkg_version_arch.deb),
// with the epoch's %3a decoded.
func debVersion(path string) string {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(path), ".deb"), "_")
	if len(parts) != 3 {
		return ""
	}
	return strings.ReplaceAll(parts[1], "%3a", ":")
}

// run runs a command in dir, its output in the error if it fails.
func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
