package microvm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// Image is a built guest image in the cache.
type Image struct {
	Dir     string // the recipe's cache directory
	Kernel  string // vmlinuz, for qemu -kernel
	Initrd  string // initrd.img, for qemu -initrd
	Disk    string // raw ext4 root filesystem image, the read-only base of every guest's qcow2 overlay
	Cmdline string // kernel command line
	Recipe  string // hex sha256 of the recipe: the cache key
}

// Names in a recipe's cache directory.
const (
	kernelFile = "vmlinuz"
	initrdFile = "initrd.img"
	diskFile   = "root.img"
	stampFile  = "stamp.json"
	// debsDir keeps the downloaded packages across recipes, so a rebuild
	// after a recipe change downloads only what changed.
	debsDir = "debs"
)

// imageStamp is written last into a recipe's directory, which is renamed
// into place only after it: a directory without a stamp whose recipe
// matches is never used.
type imageStamp struct {
	Recipe        string    `json:"recipe"`
	Built         time.Time `json:"built"`
	Mirror        string    `json:"mirror"`
	KernelRelease string    `json:"kernelRelease"`
	BuildSeconds  float64   `json:"buildSeconds"`
	LabelSeconds  float64   `json:"labelBootSeconds"`
}

// DefaultCacheDir is $CARGOSHIP_MICROVM_CACHE, else
// os.UserCacheDir()/cargoship/microvm.
func DefaultCacheDir() (string, error) {
	if d := os.Getenv("CARGOSHIP_MICROVM_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("microvm cache: %w", err)
	}
	return filepath.Join(d, "cargoship", "microvm"), nil
}

// EnsureImage returns the built-in image, building it under a lock
// (cacheDir/build.lock) when it is missing or its recipe changed. A build
// needs root (debootstrap, chroot, a loop mount) and boots nothing: most
// of its time is apt, with selinux-policy-default building the policy
// (five minutes idle, fifteen beside other suites); labelling the image
// with setfiles takes seconds.
func EnsureImage(ctx context.Context, cacheDir string, log *slog.Logger) (Image, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cacheDir, err := filepath.Abs(cacheDir)
	if err != nil {
		return Image{}, err
	}
	r := builtinRecipe()
	key := r.key()
	im := imageIn(filepath.Join(cacheDir, key), r)
	// the common case: built before, by this process or another; no lock
	if err := im.current(); err == nil {
		return im, nil
	}
	lock, err := fleet.AcquireLock(ctx, filepath.Join(cacheDir, "build.lock"), "microvm image build", log)
	if err != nil {
		return Image{}, err
	}
	defer lock.Release()
	why := im.current() // another process may have built it while we waited
	if why == nil {
		return im, nil
	}
	if os.Geteuid() != 0 {
		return Image{}, fmt.Errorf("microvm image %s is not built (%w); building it needs root (debootstrap, chroot, a loop mount)", key[:12], why)
	}
	b := &imageBuilder{recipe: r, key: key, cache: cacheDir, log: log}
	if err := b.build(ctx); err != nil {
		return Image{}, fmt.Errorf("build microvm image %s (log %s): %w", key[:12], b.logPath(), err)
	}
	if err := im.current(); err != nil {
		return Image{}, fmt.Errorf("microvm image %s: built but not usable: %w", key[:12], err)
	}
	pruneImages(cacheDir, key, log)
	return im, nil
}

func imageIn(dir string, r recipe) Image {
	return Image{
		Dir:     dir,
		Kernel:  filepath.Join(dir, kernelFile),
		Initrd:  filepath.Join(dir, initrdFile),
		Disk:    filepath.Join(dir, diskFile),
		Cmdline: r.Cmdline,
		Recipe:  filepath.Base(dir),
	}
}

// current says why im cannot be used as it is, or nil when it can.
func (im Image) current() error {
	s, err := readImageStamp(filepath.Join(im.Dir, stampFile))
	if err != nil {
		return fmt.Errorf("no stamp: %w", err)
	}
	if s.Recipe != im.Recipe {
		return fmt.Errorf("stamp records recipe %.12s, the directory is %.12s", s.Recipe, im.Recipe)
	}
	for _, p := range []string{im.Kernel, im.Initrd, im.Disk} {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Size() == 0 {
			return fmt.Errorf("%s is empty", p)
		}
	}
	return nil
}

func readImageStamp(path string) (imageStamp, error) {
	var s imageStamp
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

var recipeDirName = regexp.MustCompile(`^[0-9a-f]{64}$`)

// pruneImages removes the directories and logs of other recipes. Only
// after a successful build, under the build lock, so nobody is building
// them; a guest still running from an old image keeps its open files.
func pruneImages(cacheDir, keep string, log *slog.Logger) {
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		base := n
		if filepath.Ext(n) == ".log" {
			base = n[:len(n)-len(".log")]
		}
		if base == keep || !recipeDirName.MatchString(base) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(cacheDir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("prune microvm image", "path", filepath.Join(cacheDir, n), "err", err)
			continue
		}
		log.Info("pruned microvm image " + n)
	}
}
