package container

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mountInfo is one line of /proc/self/mountinfo, reduced to what we use.
type mountInfo struct {
	Root    string // the part of the filesystem mounted there ("/" for all of it)
	Point   string // mount point
	FSType  string
	Options string // super options; for overlay they name lowerdir/upperdir
}

func readMounts() ([]mountInfo, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountInfo
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// id parent major:minor root point opts [optional...] - fstype source superopts
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+3 >= len(fields) {
			continue
		}
		out = append(out, mountInfo{
			Root:    unescapeMount(fields[3]),
			Point:   unescapeMount(fields[4]),
			FSType:  fields[sep+1],
			Options: unescapeMount(fields[sep+3]),
		})
	}
	return out, sc.Err()
}

// unescapeMount undoes the octal escapes (\040 for space, ...) the kernel
// uses in mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsUnder lists mount points at or below dir, deepest first, so they can
// be unmounted in that order.
func mountsUnder(dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	ms, err := readMounts()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if m.Point == dir || strings.HasPrefix(m.Point, dir+"/") {
			out = append(out, m.Point)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// isMounted reports whether dir is itself a mount point.
func isMounted(dir string) bool {
	ms, _ := mountsUnder(dir)
	for _, m := range ms {
		if m == filepath.Clean(dir) {
			return true
		}
	}
	return false
}

// unmountUnder unmounts everything at or below dir. A mount still busy after
// a few tries (a process that has not quite exited) is detached lazily: the
// kernel frees it once the last user goes, and nothing new can reach it.
func unmountUnder(dir string) error {
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range points {
		var uerr error
		for try := 0; try < 10; try++ {
			uerr = syscall.Unmount(p, 0)
			if uerr == nil || errors.Is(uerr, syscall.EINVAL) || errors.Is(uerr, syscall.ENOENT) {
				uerr = nil
				break
			}
			if !errors.Is(uerr, syscall.EBUSY) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if uerr != nil {
			if derr := syscall.Unmount(p, syscall.MNT_DETACH); derr != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, uerr))
			}
		}
	}
	return errors.Join(errs...)
}

// removeTree deletes dir after unmounting anything below it. os.RemoveAll
// crosses mount points, so removing a directory with a live overlay (or a
// /proc that an interrupted debootstrap left mounted) inside would delete
// through it - the unmount has to come first, and has to have worked.
func removeTree(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := unmountUnder(dir); err != nil {
		return err
	}
	if left, _ := mountsUnder(dir); len(left) > 0 {
		return fmt.Errorf("not removing %s: still mounted: %s", dir, strings.Join(left, ", "))
	}
	return os.RemoveAll(dir)
}

// mountOverlay mounts lowers (top first) with upper/work at merged.
func mountOverlay(lowers []string, upper, work, merged string) error {
	for _, p := range append(append([]string{}, lowers...), upper, work) {
		if strings.ContainsAny(p, ",:") {
			return fmt.Errorf("overlay path %q contains ',' or ':', which mount options cannot carry", p)
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(lowers, ":"), upper, work)
	if err := syscall.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount overlay at %s (%s): %w", merged, opts, err)
	}
	return nil
}
