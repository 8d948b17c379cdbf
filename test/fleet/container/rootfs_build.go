package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// imageBuilder builds and verifies the layers under <cache>/rootfs.
type imageBuilder struct {
	cache string // <user cache>/cargoship/fleet
	log   *slog.Logger
}

func (b *imageBuilder) rootfsDir() string { return filepath.Join(b.cache, "rootfs") }
func (b *imageBuilder) debDir() string    { return filepath.Join(b.cache, "debs") }

func (b *imageBuilder) layerDir(kind, version string) string {
	return filepath.Join(b.rootfsDir(), kind+"-"+version)
}

// ensure returns verified layers, building whatever is missing or stale.
// The build lock makes a second process wait for the first one's build
// and then reuse it, instead of two debootstraps racing into one directory.
func (b *imageBuilder) ensure(ctx context.Context) (Image, error) {
	lock, err := fleet.AcquireLock(ctx, filepath.Join(b.cache, "rootfs.lock"), "rootfs build", b.log)
	if err != nil {
		return Image{}, err
	}
	defer lock.Release()

	bv, ev := baseVersion(), extraVersion()
	im := Image{Base: b.layerDir("base", bv), Extra: b.layerDir("extra", ev)}
	if err := b.current(im.Base, bv, baseChecks); err != nil {
		b.log.Info("building rootfs base layer (takes 4-7 min the first time)", "dir", im.Base, "reason", err.Error())
		if err := b.buildBase(ctx, im.Base, bv); err != nil {
			return Image{}, fmt.Errorf("build base layer: %w", err)
		}
	}
	if err := b.current(im.Extra, ev, extraChecks); err != nil {
		b.log.Info("building rootfs extra layer (a few minutes)", "dir", im.Extra, "reason", err.Error())
		if err := b.buildExtra(ctx, im.Base, im.Extra, ev); err != nil {
			return Image{}, fmt.Errorf("build extra layer: %w", err)
		}
	}
	b.prune(im)
	return im, nil
}

// current says why a layer cannot be used as it is, or nil when it can.
func (b *imageBuilder) current(dir, version string, checks [][]string) error {
	s, err := readStamp(dir + ".stamp")
	if err != nil {
		return fmt.Errorf("no stamp: %w", err)
	}
	if s.Version != version {
		return fmt.Errorf("stamp records version %s, recipe is %s", s.Version, version)
	}
	return verifyLayer(dir, checks)
}

func (b *imageBuilder) buildLog(name string) (*os.File, error) {
	return os.Create(filepath.Join(b.rootfsDir(), name+".log"))
}

// runLogged runs a build step with its output appended to the build log, and
// returns an error carrying the log's tail so a failed apt step explains
// itself without anyone opening the file.
func runLogged(ctx context.Context, logf *os.File, name string, args ...string) error {
	_, _ = fmt.Fprintf(logf, "\n$ %s %s\n", name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(logf.Name())
		return fmt.Errorf("%s %s: %w (log %s): %s", name, strings.Join(args, " "), err, logf.Name(), fleet.Tail(string(b), 1500))
	}
	return nil
}

func (b *imageBuilder) buildBase(ctx context.Context, dir, version string) error {
	start := time.Now()
	for _, d := range []string{b.rootfsDir(), b.debDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	partial := dir + ".partial"
	_ = os.Remove(dir + ".stamp")
	if err := removeTree(partial); err != nil {
		return err
	}
	logf, err := b.buildLog(filepath.Base(dir))
	if err != nil {
		return err
	}
	defer logf.Close()
	mirror := fleet.DebianMirror()
	if err := runLogged(ctx, logf, "debootstrap", "--variant=minbase",
		"--include="+strings.Join(baseInclude, ","), "--cache-dir="+b.debDir(),
		guestSuite, partial, mirror); err != nil {
		_ = unmountUnder(partial) // debootstrap can die with /proc mounted inside
		return err
	}
	if err := configureBase(ctx, logf, partial); err != nil {
		return err
	}
	if err := verifyLayer(partial, baseChecks); err != nil {
		return err
	}
	if err := removeTree(dir); err != nil {
		return err
	}
	if err := os.Rename(partial, dir); err != nil {
		return err
	}
	return b.writeStamp(dir, version, mirror, start)
}

func (b *imageBuilder) writeStamp(dir, version, mirror string, start time.Time) error {
	d := time.Since(start)
	data, _ := json.MarshalIndent(stamp{Version: version, Built: time.Now().UTC(), Mirror: mirror, Seconds: d.Seconds()}, "", "  ")
	if err := fleet.WriteFileAtomic(dir+".stamp", append(data, '\n'), 0o644); err != nil {
		return err
	}
	b.log.Info(fmt.Sprintf("built layer %s in %s", filepath.Base(dir), d.Round(time.Second)))
	return nil
}

// configureBase turns a fresh debootstrap into a template: no identity baked
// in (machine-id, host keys, hostname are per host), the fleet users, and the
// service tweaks a container host needs.
func configureBase(ctx context.Context, logf *os.File, r string) error {
	globs := []string{"etc/ssh/ssh_host_*", "var/cache/apt/archives/*.deb", "var/lib/apt/lists/*"}
	for _, g := range globs {
		matches, _ := filepath.Glob(filepath.Join(r, g))
		for _, m := range matches {
			if filepath.Base(m) == "partial" || filepath.Base(m) == "lock" {
				continue
			}
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	for _, p := range []string{"var/lib/dbus/machine-id", "etc/hostname"} {
		if err := os.Remove(filepath.Join(r, p)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := backend.WriteRootFiles(r, baseFiles); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(r, "root/.ssh"), 0o700); err != nil {
		return err
	}
	for _, u := range fleetUsers {
		if err := runLogged(ctx, logf, "chroot", r, "useradd", "-m", "-s", "/bin/bash", "-G", "sudo", u); err != nil {
			return err
		}
		if err := runLogged(ctx, logf, "chroot", r, "install", "-d", "-m", "700", "-o", u, "-g", u, "/home/"+u+"/.ssh"); err != nil {
			return err
		}
	}
	if err := runLogged(ctx, logf, "chroot", append([]string{r, "systemctl", "mask"}, baseMasked...)...); err != nil {
		return err
	}
	kdir := filepath.Join(r, "lib/modules", kernelRelease())
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(kdir, "modules.order"), nil, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(kdir, "modules.builtin"), []byte(strings.Join(fakeBuiltinModules, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return runLogged(ctx, logf, "chroot", r, "depmod", "-a", kernelRelease())
}

// buildExtra installs the extra packages into an overlay upper dir on top of
// base, inside a throw-away nspawn (apt's maintainer scripts want a /proc,
// /dev and /run that a bare chroot does not give). The .deb cache is bind
// mounted as apt's archive dir so a rebuild downloads only the indexes.
func (b *imageBuilder) buildExtra(ctx context.Context, base, dir, version string) error {
	start := time.Now()
	partial, work, merged := dir+".partial", dir+".work", dir+".merged"
	_ = os.Remove(dir + ".stamp")
	for _, d := range []string{merged, work, partial} {
		if err := removeTree(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(b.debDir(), 0o755); err != nil {
		return err
	}
	logf, err := b.buildLog(filepath.Base(dir))
	if err != nil {
		return err
	}
	defer logf.Close()
	if err := mountOverlay([]string{base}, partial, work, merged); err != nil {
		return err
	}
	defer func() {
		_ = unmountUnder(merged)
		_ = os.RemoveAll(merged)
		_ = os.RemoveAll(work)
		_ = os.RemoveAll(filepath.Join("/run/systemd/nspawn/propagate", buildMachine))
	}()
	script := "apt-get update -qq && apt-get install -y -q --no-install-recommends " + strings.Join(extraPackages, " ")
	if err := runLogged(ctx, logf, "systemd-nspawn", "-q", "-D", merged, "--machine="+buildMachine,
		"--register=no", "--keep-unit", "--resolv-conf=bind-host", "--pipe",
		"--bind="+b.debDir()+":/var/cache/apt/archives",
		"--setenv=DEBIAN_FRONTEND=noninteractive", "/bin/sh", "-c", script); err != nil {
		return err
	}
	lists, _ := filepath.Glob(filepath.Join(merged, "var/lib/apt/lists/*"))
	for _, m := range lists {
		if filepath.Base(m) != "partial" && filepath.Base(m) != "lock" {
			_ = os.RemoveAll(m)
		}
	}
	if err := runLogged(ctx, logf, "chroot", append([]string{merged, "systemctl", "disable"}, extraDisabled...)...); err != nil {
		return err
	}
	if err := unmountUnder(merged); err != nil {
		return err
	}
	if err := verifyLayer(partial, extraChecks); err != nil {
		return err
	}
	for _, u := range extraDisabled {
		if _, err := os.Lstat(filepath.Join(partial, "etc/systemd/system/multi-user.target.wants", u)); err == nil {
			return fmt.Errorf("%s is still enabled in %s", u, partial)
		}
	}
	if err := removeTree(dir); err != nil {
		return err
	}
	if err := os.Rename(partial, dir); err != nil {
		return err
	}
	return b.writeStamp(dir, version, fleet.DebianMirror(), start)
}

// prune deletes layers of older recipe versions, unless a running fleet still
// has one mounted as a lower layer: deleting a lower under a live overlay
// would pull files out from under its hosts.
func (b *imageBuilder) prune(keep Image) {
	entries, err := os.ReadDir(b.rootfsDir())
	if err != nil {
		return
	}
	mounts, _ := readMounts()
	inUse := func(dir string) bool {
		for _, m := range mounts {
			if m.FSType == "overlay" && strings.Contains(m.Options, dir) {
				return true
			}
		}
		return false
	}
	keepNames := map[string]bool{filepath.Base(keep.Base): true, filepath.Base(keep.Extra): true}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || (!strings.HasPrefix(name, "base-") && !strings.HasPrefix(name, "extra-")) {
			continue
		}
		layer := name
		for _, suf := range []string{".partial", ".work", ".merged"} {
			layer = strings.TrimSuffix(layer, suf)
		}
		if keepNames[layer] && layer == name {
			continue
		}
		full := filepath.Join(b.rootfsDir(), name)
		if keepNames[layer] || inUse(full) {
			continue // a build leftover of a current layer is the builder's business
		}
		b.log.Info("removing stale rootfs layer", "dir", full)
		if err := removeTree(full); err == nil {
			_ = os.Remove(full + ".stamp")
			_ = os.Remove(full + ".log")
		}
	}
}
