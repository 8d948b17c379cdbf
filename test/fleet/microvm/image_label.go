package microvm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// The image's SELinux labels, set offline (docs/reference/microvm.md §6).
// The build used to boot the image once under qemu with /.autorelabel
// and let the guest relabel itself: 2.5 minutes on an idle machine, and
// more than the 15 it was allowed beside CI's other suites under TCG. The
// guest's own setfiles, run in a chroot of the loop-mounted image, does the
// same work natively in seconds.

// labelImage labels the image's filesystem for SELinux: it loop-mounts
// the image and runs the guest's own setfiles, chrooted into it, with the
// guest policy's file contexts (the recipe's FileContexts), which
// semodule wrote with the recipe's modules and the home directories of the
// recipe's users. No policy need be loaded: a kernel without SELinux lets
// root write security.selinux as any other attribute of the security
// namespace. Then checkLabels fails the build on a wrong or partial
// labelling.
func (b *imageBuilder) labelImage(ctx context.Context, disk string) (err error) {
	m := b.mnt()
	if err := os.MkdirAll(m, 0o755); err != nil {
		return err
	}
	if err := b.runLogged(ctx, "mount", "-o", "loop", disk, m); err != nil {
		return err
	}
	defer func() {
		if e := b.runLogged(context.WithoutCancel(ctx), "umount", m); e != nil && err == nil {
			err = e
		}
	}()
	if err := b.setfiles(ctx, m); err != nil {
		return err
	}
	return b.checkLabels(m)
}

// setfiles runs the guest's setfiles over the image mounted on m, with a
// proc mounted in it for as long as it runs: libselinux 3.4 reads and
// writes a label through /proc/self/fd, and without a proc every file
// fails with "No such file or directory" (§5). Nothing else is mounted, so
// setfiles labels the directories a guest mounts /dev, /run and /sys on,
// and the host's own are never in reach.
func (b *imageBuilder) setfiles(ctx context.Context, m string) (err error) {
	proc := filepath.Join(m, "proc")
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount proc on %s: %w", proc, err)
	}
	defer func() {
		if unix.Unmount(proc, 0) == nil {
			return
		}
		if e := unix.Unmount(proc, unix.MNT_DETACH); e != nil && err == nil {
			err = fmt.Errorf("unmount %s: %w", proc, e)
		}
	}()
	// -F: the whole context, user and role too, as the file contexts say
	return b.runLogged(ctx, "chroot", m, "setfiles", "-F", b.recipe.FileContexts, "/")
}

// labelChecks are files whose SELinux type after the labelling proves it
// labelled the filesystem as the policy says: the two .ssh directories
// come from the home directories' contexts, which sshd needs under
// enforcing to read authorized_keys.
var labelChecks = map[string]string{
	"usr/sbin/sshd":                      "sshd_exec_t",
	"etc/shadow":                         "shadow_t",
	"usr/lib/systemd/systemd":            "init_exec_t",
	strings.TrimPrefix(seedScript, "/"):  "bin_t",
	"root/.ssh":                          "ssh_home_t",
	"home/" + fleet.UserTester + "/.ssh": "ssh_home_t",
}

// checkLabels fails unless the image on m is labelled: labelChecks' files
// carry their types, and every file has a label but those the policy's
// file contexts leave without one (<<none>>).
func (b *imageBuilder) checkLabels(m string) error {
	for _, p := range slices.Sorted(maps.Keys(labelChecks)) {
		label, err := selinuxLabel(filepath.Join(m, p))
		if err != nil {
			return fmt.Errorf("after labelling: %w", err)
		}
		_, _ = fmt.Fprintf(b.logf, "label /%s %s\n", p, label)
		if !strings.Contains(label, ":"+labelChecks[p]+":") {
			return fmt.Errorf("after labelling /%s is labelled %q, want type %s", p, label, labelChecks[p])
		}
	}
	pol, err := readPolicyUnlabelled(m, b.recipe.FileContexts)
	if err != nil {
		return err
	}
	c, err := countLabels(m, pol)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(b.logf, "%d files labelled, %d left unlabelled as the file contexts say (%d <<none>> entries; not read: %q)\n",
		c.labelled, c.none, len(pol.none), pol.skipped)
	if len(c.stray) > 0 {
		return fmt.Errorf("after labelling %d files have no SELinux label the policy gives them: %s",
			len(c.stray), strings.Join(c.stray[:min(len(c.stray), 20)], ", "))
	}
	return nil
}

// selinuxLabel reads a file's security.selinux attribute.
func selinuxLabel(path string) (string, error) {
	buf := make([]byte, 256)
	n, err := unix.Lgetxattr(path, "security.selinux", buf)
	if err != nil {
		return "", fmt.Errorf("%s: security.selinux: %w", path, err)
	}
	return strings.TrimRight(string(buf[:n]), "\x00"), nil
}

// policyUnlabelled is what a policy's file contexts leave unlabelled: their
// <<none>> entries, and the path aliases (file_contexts.subs_dist and
// .subs) setfiles applies to a path before it looks it up.
type policyUnlabelled struct {
	none    []noneSpec
	subs    [][2]string // alias, original
	skipped []string    // <<none>> entries Go's regexp cannot compile
}

// noneSpec is a <<none>> entry: a regular expression matched against the
// whole path and, when not empty, a file type (--, -d, -l, -c, -b, -s, -p).
type noneSpec struct {
	re   *regexp.Regexp
	kind string
}

// readPolicyUnlabelled reads fileContexts and the files beside it from the
// tree under root.
func readPolicyUnlabelled(root, fileContexts string) (policyUnlabelled, error) {
	var p policyUnlabelled
	read := func(suffix string, must bool) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, fileContexts+suffix))
		if errors.Is(err, fs.ErrNotExist) && !must {
			return "", nil
		}
		return string(b), err
	}
	for _, s := range []string{"", ".homedirs", ".local"} {
		text, err := read(s, s == "")
		if err != nil {
			return p, err
		}
		none, skipped := parseNoneSpecs(text)
		p.none, p.skipped = append(p.none, none...), append(p.skipped, skipped...)
	}
	for _, s := range []string{".subs_dist", ".subs"} {
		text, err := read(s, false)
		if err != nil {
			return p, err
		}
		p.subs = append(p.subs, parseSubs(text)...)
	}
	return p, nil
}

// parseNoneSpecs returns the <<none>> entries of a file_contexts text, and
// the expressions of those Go's regexp cannot compile. Those are left out,
// which errs towards failing the build: a file they name must then carry
// a label.
func parseNoneSpecs(text string) (specs []noneSpec, skipped []string) {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || len(f) > 3 || strings.HasPrefix(f[0], "#") || f[len(f)-1] != "<<none>>" {
			continue
		}
		re, err := regexp.Compile("^(?:" + f[0] + ")$")
		if err != nil {
			skipped = append(skipped, f[0])
			continue
		}
		s := noneSpec{re: re}
		if len(f) == 3 {
			s.kind = f[1]
		}
		specs = append(specs, s)
	}
	return specs, skipped
}

// parseSubs returns the aliases of a file_contexts.subs text: lines of an
// alias and the path it stands for.
func parseSubs(text string) [][2]string {
	var subs [][2]string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && !strings.HasPrefix(f[0], "#") {
			subs = append(subs, [2]string{f[0], f[1]})
		}
	}
	return subs
}

// leaves says whether the policy leaves path, a file of the given mode,
// unlabelled: a <<none>> entry matches it. It does not weigh a more
// specific entry that labels the path after all; it is a check that the
// labelling reached every file, not a second setfiles.
func (p policyUnlabelled) leaves(path string, mode fs.FileMode) bool {
	for _, s := range p.subs {
		if path == s[0] || strings.HasPrefix(path, s[0]+"/") {
			path = s[1] + path[len(s[0]):]
			break
		}
	}
	for _, s := range p.none {
		if s.re.MatchString(path) && kindMatches(s.kind, mode) {
			return true
		}
	}
	return false
}

// kindMatches says whether a file of mode is of a file_contexts file type.
func kindMatches(kind string, mode fs.FileMode) bool {
	t := mode.Type()
	switch kind {
	case "":
		return true
	case "--":
		return t == 0
	case "-d":
		return t == fs.ModeDir
	case "-l":
		return t == fs.ModeSymlink
	case "-c":
		return t == fs.ModeDevice|fs.ModeCharDevice
	case "-b":
		return t == fs.ModeDevice
	case "-s":
		return t == fs.ModeSocket
	case "-p":
		return t == fs.ModeNamedPipe
	}
	return false
}

// labelCount is what countLabels found.
type labelCount struct {
	labelled, none int
	stray          []string // unlabelled, and no <<none>> entry says so
}

// countLabels walks the tree under root, its paths taken as from the
// guest's /, and counts the files that carry a security.selinux label.
func countLabels(root string, p policyUnlabelled) (labelCount, error) {
	var c labelCount
	buf := make([]byte, 256)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		guest := "/" + filepath.ToSlash(rel)
		if rel == "." {
			guest = "/"
		}
		_, err = unix.Lgetxattr(path, "security.selinux", buf)
		switch {
		case err == nil:
			c.labelled++
			return nil
		case !errors.Is(err, unix.ENODATA):
			return fmt.Errorf("%s: security.selinux: %w", guest, err)
		}
		if p.leaves(guest, d.Type()) {
			c.none++
		} else {
			c.stray = append(c.stray, guest)
		}
		return nil
	})
	return c, err
}
