package microvm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// imageBuilder builds one recipe's image into a temporary directory of
// cacheDir, which is renamed to the recipe's directory when complete.
type imageBuilder struct {
	recipe recipe
	key    string
	cache  string
	log    *slog.Logger

	logf  *os.File
	tmp   string // the directory being built: .build-<short key>-*
	start time.Time
}

func (b *imageBuilder) short() string   { return b.key[:12] }
func (b *imageBuilder) logPath() string { return filepath.Join(b.cache, b.key+".log") }
func (b *imageBuilder) root() string    { return filepath.Join(b.tmp, "rootfs") }
func (b *imageBuilder) mnt() string     { return filepath.Join(b.tmp, "mnt") }

func (b *imageBuilder) step(what string) {
	b.log.Info(fmt.Sprintf("building microvm image %s: %s", b.short(), what))
	_, _ = fmt.Fprintf(b.logf, "\n### %s (%s)\n", what, fleet.Since(b.start))
}

// runLogged runs a build command with its output in the build log, and
// fails with the log's tail, so a failed apt step explains itself.
func (b *imageBuilder) runLogged(ctx context.Context, name string, args ...string) error {
	_, _ = fmt.Fprintf(b.logf, "\n$ %s %s\n", name, strings.Join(args, " "))
	var tail tailBuffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = io.MultiWriter(b.logf, &tail)
	cmd.Stderr = cmd.Stdout
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail.String())
	}
	return nil
}

// chroot runs a command inside the root being built.
func (b *imageBuilder) chroot(ctx context.Context, args ...string) error {
	return b.runLogged(ctx, "chroot", append([]string{b.root()}, args...)...)
}

// tailBuffer keeps the last 2000 bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2000 {
		t.b = t.b[len(t.b)-2000:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }

// build makes the image: debootstrap, the packages, the configuration,
// an ext4 image of the tree, and its SELinux labels, set offline.
func (b *imageBuilder) build(ctx context.Context) error {
	b.start = time.Now()
	if err := os.MkdirAll(filepath.Join(b.cache, debsDir, "partial"), 0o755); err != nil {
		return err
	}
	b.removeStaleBuilds()
	logf, err := os.Create(b.logPath())
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()
	b.logf = logf
	if b.tmp, err = os.MkdirTemp(b.cache, ".build-"+b.short()+"-"); err != nil {
		return err
	}
	defer func() {
		// a leftover directory is removed by the next build; say so
		if err := b.removeBuildDir(b.tmp); err != nil {
			b.log.Warn(fmt.Sprintf("microvm image: leaving %s: %v", b.tmp, err))
		}
	}()
	mirror := fleet.DebianMirror()

	b.step("debootstrap " + b.recipe.Suite + " from " + mirror)
	if err := b.runLogged(ctx, "debootstrap", "--variant="+b.recipe.Variant, "--arch="+b.recipe.Arch,
		"--cache-dir="+filepath.Join(b.cache, debsDir), b.recipe.Suite, b.root(), mirror); err != nil {
		return err
	}
	if err := b.inChroot(ctx, b.installAndConfigure); err != nil {
		return err
	}
	b.step("identity removed")
	if err := b.removeGlobs(b.root(), b.recipe.Removed); err != nil {
		return err
	}
	release, err := b.copyBoot()
	if err != nil {
		return err
	}

	b.step("mkfs.ext4")
	disk := filepath.Join(b.tmp, diskFile)
	if err := b.runLogged(ctx, "mkfs.ext4", "-q", "-d", b.root(), "-L", "root", disk,
		strconv.FormatInt(b.recipe.SizeBytes>>20, 10)+"M"); err != nil {
		return err
	}
	if err := b.removeBuildDir(b.root()); err != nil {
		return err
	}

	b.step("SELinux labels (setfiles, offline)")
	labelStart := time.Now()
	if err := b.labelImage(ctx, disk); err != nil {
		return err
	}
	labelTime := time.Since(labelStart)
	b.log.Info(fmt.Sprintf("microvm image %s: labelling took %s", b.short(), fleet.Since(labelStart)))
	b.step("e2fsck")
	if err := b.runLogged(ctx, "e2fsck", "-fy", disk); err != nil {
		return err
	}

	built := time.Since(b.start)
	st, _ := json.MarshalIndent(imageStamp{
		Recipe: b.key, Built: time.Now().UTC(), Mirror: mirror, KernelRelease: release,
		BuildSeconds: built.Seconds(), LabelSeconds: labelTime.Seconds(),
	}, "", "  ")
	if err := fleet.WriteFileAtomic(filepath.Join(b.tmp, stampFile), append(st, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Remove(b.mnt()); err != nil {
		return err
	}
	// MkdirTemp made it 0700; qemu need not run as root
	if err := os.Chmod(b.tmp, 0o755); err != nil {
		return err
	}
	dir := filepath.Join(b.cache, b.key)
	if err := os.RemoveAll(dir); err != nil { // a stale directory without a stamp
		return err
	}
	if err := os.Rename(b.tmp, dir); err != nil {
		return err
	}
	b.log.Info(fmt.Sprintf("built microvm image %s in %s", b.short(), fleet.Since(b.start)), "dir", dir)
	return nil
}

// inChroot runs f with /proc, /sys and /dev bound into the root, the host's
// resolv.conf for apt, the package cache bound on apt's archive directory,
// and a policy-rc.d that keeps maintainer scripts from starting services.
// All of it is undone before it returns.
func (b *imageBuilder) inChroot(ctx context.Context, f func(context.Context) error) (err error) {
	r := b.root()
	var mounted []string
	defer func() {
		for i := len(mounted) - 1; i >= 0; i-- {
			if e := unix.Unmount(mounted[i], 0); e != nil {
				_ = unix.Unmount(mounted[i], unix.MNT_DETACH)
			}
		}
	}()
	bind := func(src, dst string) error {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s on %s: %w", src, dst, err)
		}
		// a recursive bind's submounts must not propagate back out
		_ = unix.Mount("", dst, "", unix.MS_SLAVE|unix.MS_REC, "")
		mounted = append(mounted, dst)
		return nil
	}
	for _, d := range []string{"proc", "sys", "dev"} {
		if err := bind("/"+d, filepath.Join(r, d)); err != nil {
			return err
		}
	}
	if err := bind(filepath.Join(b.cache, debsDir), filepath.Join(r, "var/cache/apt/archives")); err != nil {
		return err
	}
	resolv := filepath.Join(r, "etc/resolv.conf")
	_ = os.Remove(resolv)
	if host, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		if err := os.WriteFile(resolv, host, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(r, "usr/sbin/policy-rc.d"), []byte("#!/bin/sh\nexit 101\n"), 0o755); err != nil {
		return err
	}
	defer func() {
		if e := os.Remove(filepath.Join(r, "usr/sbin/policy-rc.d")); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
			err = e
		}
	}()
	return f(ctx)
}

func (b *imageBuilder) installAndConfigure(ctx context.Context) error {
	r := b.recipe
	b.step("packages")
	if err := b.chroot(ctx, "apt-get", "update"); err != nil {
		return err
	}
	install := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, r.Packages...)
	if err := b.chroot(ctx, install...); err != nil {
		// a maintainer script that failed half way leaves dependency
		// problems apt-get -f can finish (§5)
		b.log.Info(fmt.Sprintf("microvm image %s: apt-get install failed, trying apt-get -f install", b.short()))
		if err := b.chroot(ctx, "apt-get", "-f", "install", "-y", "--no-install-recommends"); err != nil {
			return err
		}
		if err := b.chroot(ctx, install...); err != nil {
			return err
		}
	}
	// no apt-get clean: the archive directory is the cache bound in, kept
	// for the next build; the image's own is the empty directory beneath

	b.step("configure")
	if err := backend.WriteRootFiles(b.root(), r.Files); err != nil {
		return err
	}
	for _, e := range r.Edits {
		if err := editLine(filepath.Join(b.root(), e.Path), e.Old, e.New); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(b.root(), "root/.ssh"), 0o700); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(b.root(), "root/.ssh"), 0o700); err != nil {
		return err
	}
	for _, u := range r.Users {
		if err := b.chroot(ctx, "useradd", "-m", "-s", "/bin/bash", "-G", "sudo", u); err != nil {
			return err
		}
		if err := b.chroot(ctx, "install", "-d", "-m", "700", "-o", u, "-g", u, "/home/"+u+"/.ssh"); err != nil {
			return err
		}
	}
	if err := b.chroot(ctx, append([]string{"systemctl", "enable"}, r.Enabled...)...); err != nil {
		return err
	}
	if err := b.chroot(ctx, append([]string{"systemctl", "mask"}, r.Masked...)...); err != nil {
		return err
	}

	b.step("SELinux modules")
	var cils []string
	for _, name := range slices.Sorted(maps.Keys(r.Modules)) {
		p := "/tmp/" + name + ".cil"
		if err := os.WriteFile(filepath.Join(b.root(), p), []byte(r.Modules[name]), 0o644); err != nil {
			return err
		}
		cils = append(cils, p)
	}
	// -n: the policy store is compiled without loading it into a kernel
	// this machine's kernel has no SELinux
	if err := b.chroot(ctx, append([]string{"semodule", "-n", "-i"}, cils...)...); err != nil {
		return err
	}
	for _, p := range cils {
		_ = os.Remove(filepath.Join(b.root(), p))
	}

	b.step("fapolicyd rules and trust")
	rulesD := filepath.Join(b.root(), "etc/fapolicyd/rules.d")
	if err := b.removeGlobs(b.root(), []string{"etc/fapolicyd/rules.d/*"}); err != nil {
		return err
	}
	for _, n := range r.Fapolicy.SampleRules {
		src, err := os.ReadFile(filepath.Join(b.root(), "usr/share/fapolicyd/sample-rules", n))
		if err != nil {
			return fmt.Errorf("fapolicyd sample rule: %w", err)
		}
		if err := os.WriteFile(filepath.Join(rulesD, n), src, 0o644); err != nil {
			return err
		}
	}
	// the trust database is filled last, once /usr holds all it will:
	// a file changed after it is untrusted (its size and sha256 differ)
	if err := b.removeGlobs(b.root(), []string{"usr/sbin/policy-rc.d"}); err != nil {
		return err
	}
	for _, p := range r.Fapolicy.Trust {
		if err := b.chroot(ctx, "fapolicyd-cli", "--file", "add", p); err != nil {
			return err
		}
	}
	// compiled.rules now, so it is in the image when it is labelled;
	// fapolicyd's unit runs fagenrules again at each start, which leaves
	// it as it is
	return b.chroot(ctx, "fagenrules")
}

// editLine replaces the line old of path by new; old must be there.
func editLine(path, old, new string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	found := false
	for i, l := range lines {
		if strings.TrimSpace(l) == old {
			lines[i], found = new, true
		}
	}
	if !found {
		return fmt.Errorf("%s has no line %q", path, old)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), fi.Mode().Perm())
}

// removeGlobs removes what the globs under root match.
func (b *imageBuilder) removeGlobs(root string, globs []string) error {
	for _, g := range globs {
		matches, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if n := filepath.Base(m); n == "partial" || n == "lock" {
				continue // apt's own
			}
			if err := os.RemoveAll(m); err != nil {
				return err
			}
			_, _ = fmt.Fprintf(b.logf, "removed %s\n", strings.TrimPrefix(m, root))
		}
	}
	return nil
}

// copyBoot copies the kernel and initrd out of the root's /boot (readable
// by anyone: qemu need not run as root) and returns the kernel release.
func (b *imageBuilder) copyBoot() (string, error) {
	kernels, _ := filepath.Glob(filepath.Join(b.root(), "boot/vmlinuz-*"))
	if len(kernels) != 1 {
		return "", fmt.Errorf("want one kernel in /boot, found %d", len(kernels))
	}
	release := strings.TrimPrefix(filepath.Base(kernels[0]), "vmlinuz-")
	for src, dst := range map[string]string{
		kernels[0]: kernelFile,
		filepath.Join(b.root(), "boot/initrd.img-"+release): initrdFile,
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(b.tmp, dst), data, 0o644); err != nil {
			return "", err
		}
	}
	return release, nil
}

// removeStaleBuilds removes what killed builds left. The build lock is
// held, so nobody is still working in them.
func (b *imageBuilder) removeStaleBuilds() {
	stale, _ := filepath.Glob(filepath.Join(b.cache, ".build-*"))
	for _, d := range stale {
		_ = b.removeBuildDir(d)
	}
}

// removeBuildDir removes a build directory, unmounting first whatever a
// killed build left mounted in it: removing through a bind mount of /dev
// or the package cache would delete the host's files.
func (b *imageBuilder) removeBuildDir(dir string) error {
	mounts, _ := os.ReadFile("/proc/self/mounts")
	var under []string
	for _, l := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && (f[1] == dir || strings.HasPrefix(f[1], dir+"/")) {
			under = append(under, f[1])
		}
	}
	for i := len(under) - 1; i >= 0; i-- {
		if err := unix.Unmount(under[i], unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount %s: %w", under[i], err)
		}
	}
	if len(under) > 0 {
		// detached mounts are gone from the tree at once
		time.Sleep(100 * time.Millisecond)
	}
	return os.RemoveAll(dir)
}
