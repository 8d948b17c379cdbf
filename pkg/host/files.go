package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The file helpers work as root (through Sudo) on any Runner, so they
// behave the same over ssh, openSSH and localhost. Paths must be absolute.

// notFoundCode is the exit code the scripts use for a missing path.
const notFoundCode = 44

// statFormat prints size, raw mode (hex), owner and group names and ids.
const statFormat = `stat -c '%s %f %U %G %u %g' -- `

// FileInfo describes a file on a host.
type FileInfo struct {
	Size int64
	// Mode holds the permission bits, setuid/setgid/sticky, and
	// os.ModeDir or os.ModeSymlink for those file types.
	Mode        os.FileMode
	User, Group string
	UID, GID    int
}

// IsDir reports whether the file is a directory.
func (fi FileInfo) IsDir() bool { return fi.Mode.IsDir() }

// IsRegular reports whether the file is a regular file.
func (fi FileInfo) IsRegular() bool { return fi.Mode.IsRegular() }

// Owner is "user:group" by name.
func (fi FileInfo) Owner() string { return fi.User + ":" + fi.Group }

// parseStat reads one line of statFormat output.
func parseStat(line string) (FileInfo, error) {
	f := strings.Fields(line)
	if len(f) != 6 {
		return FileInfo{}, fmt.Errorf("unexpected stat output %q", line)
	}
	size, err1 := strconv.ParseInt(f[0], 10, 64)
	raw, err2 := strconv.ParseUint(f[1], 16, 32)
	uid, err3 := strconv.Atoi(f[4])
	gid, err4 := strconv.Atoi(f[5])
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return FileInfo{}, fmt.Errorf("unexpected stat output %q", line)
	}
	mode := os.FileMode(raw & 0o777)
	if raw&0o4000 != 0 {
		mode |= os.ModeSetuid
	}
	if raw&0o2000 != 0 {
		mode |= os.ModeSetgid
	}
	if raw&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	switch raw & 0o170000 {
	case 0o040000:
		mode |= os.ModeDir
	case 0o120000:
		mode |= os.ModeSymlink
	case 0o100000:
	default:
		mode |= os.ModeIrregular
	}
	return FileInfo{Size: size, Mode: mode, User: f[2], Group: f[3], UID: uid, GID: gid}, nil
}

// permBits is the part of a mode chmod sets.
func permBits(m os.FileMode) os.FileMode {
	return m & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}

// chmodArg renders a mode as chmod's octal argument.
func chmodArg(m os.FileMode) string {
	v := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		v |= 0o1000
	}
	return strconv.FormatUint(uint64(v), 8)
}

var ownerPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$`)

// ownerMatches reports whether fi is owned as want ("user", "user:group",
// names or numeric ids) says.
func ownerMatches(want string, fi FileInfo) bool {
	if want == "" {
		return true
	}
	u, g, hasGroup := strings.Cut(want, ":")
	if u != fi.User && u != strconv.Itoa(fi.UID) {
		return false
	}
	return !hasGroup || g == fi.Group || g == strconv.Itoa(fi.GID)
}

func checkPath(p string) error {
	switch {
	case !path.IsAbs(p):
		return fmt.Errorf("%q is not an absolute path", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%q holds a NUL byte", p)
	}
	return nil
}

func checkOwner(owner string) error {
	if owner != "" && !ownerPattern.MatchString(owner) {
		return fmt.Errorf("owner %q is not user or user:group", owner)
	}
	return nil
}

// fileError names host, operation and path; a failed command reads as its
// stderr rather than the script that ran.
func fileError(r Runner, op, p string, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		err = &commandError{ee}
	}
	return fmt.Errorf("%s: %w", r.String(), &fs.PathError{Op: op, Path: p, Err: err})
}

// commandError shows an ExitError by what the command said.
type commandError struct{ e *ExitError }

func (c *commandError) Error() string {
	if c.e.Stderr != "" {
		return c.e.Stderr
	}
	return fmt.Sprintf("exited %d", c.e.Code)
}

func (c *commandError) Unwrap() error { return c.e }

func isExit(err error, code int) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.Code == code
}

// MaxReadFile is the most ReadFile reads: the files cargoship reads back
// are configuration, tokens and records, and a host must not be able to
// fill this machine's memory with one.
const MaxReadFile = MaxOutput

// ReadFile reads a file as root, at most MaxReadFile bytes: a larger file
// is an error. A missing file gives an error matching
// errors.Is(err, fs.ErrNotExist).
func ReadFile(ctx context.Context, r Runner, p string) ([]byte, error) {
	return ReadFileLimit(ctx, r, p, MaxReadFile)
}

// ReadFileLimit is ReadFile with a bound of limit bytes. The host reads no
// more than limit+1 (head -c), and a host that sends more anyway is stopped
// by Run's own bound.
func ReadFileLimit(ctx context.Context, r Runner, p string, limit int64) ([]byte, error) {
	if err := checkPath(p); err != nil {
		return nil, fileError(r, "read", p, err)
	}
	if limit <= 0 {
		return nil, fileError(r, "read", p, fmt.Errorf("limit %d is not positive", limit))
	}
	out, err := r.Sudo(ctx, readFileCommand(p, limit), WithMaxOutput(limit+1))
	if isExit(err, notFoundCode) {
		return nil, fileError(r, "read", p, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fileError(r, "read", p, err)
	}
	if int64(len(out)) > limit {
		return nil, fileError(r, "read", p, fmt.Errorf("larger than %s, the most cargoship reads back", byteSize(limit)))
	}
	return []byte(out), nil
}

// ReadFileCommand is the command ReadFile sends for p, for Prefetch.
func ReadFileCommand(p string) string { return readFileCommand(p, MaxReadFile) }

// readFileCommand prints p, at most limit+1 bytes, or exits 44 when it is
// missing.
func readFileCommand(p string, limit int64) string {
	return Script(`[ -e "$1" ] || exit 44; exec head -c "$2" -- "$1"`, p, strconv.FormatInt(limit+1, 10))
}

// ReadFileIfExists is ReadFile for a file that may be missing: no file is
// exists=false and no error.
func ReadFileIfExists(ctx context.Context, r Runner, p string) (data []byte, exists bool, err error) {
	data, err = ReadFile(ctx, r, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// FileSHA256 returns the hex sha256 of a file, and whether it exists.
func FileSHA256(ctx context.Context, r Runner, p string) (string, bool, error) {
	if err := checkPath(p); err != nil {
		return "", false, fileError(r, "hash", p, err)
	}
	out, err := r.Sudo(ctx, FileSHA256Command(p))
	if isExit(err, notFoundCode) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fileError(r, "hash", p, err)
	}
	sum, err := parseSum(out)
	if err != nil {
		return "", false, fileError(r, "hash", p, err)
	}
	return sum, true, nil
}

// FileSHA256Command is the command FileSHA256 sends for p, for Prefetch.
func FileSHA256Command(p string) string {
	return Script(`[ -e "$1" ] || exit 44; sha256sum < "$1"`, p)
}

// parseSum reads sha256sum's "<hex>  -" line.
func parseSum(out string) (string, error) {
	f := strings.Fields(out)
	if len(f) == 0 || !isSHA256(f[0]) {
		return "", fmt.Errorf("unexpected sha256sum output %q", out)
	}
	return f[0], nil
}

func isSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && s == strings.ToLower(s)
}

// Stat describes a file without following a final symlink. A missing
// file gives an error matching errors.Is(err, fs.ErrNotExist).
func Stat(ctx context.Context, r Runner, p string) (FileInfo, error) {
	if err := checkPath(p); err != nil {
		return FileInfo{}, fileError(r, "stat", p, err)
	}
	out, err := r.Sudo(ctx, StatCommand(p))
	if isExit(err, notFoundCode) {
		return FileInfo{}, fileError(r, "stat", p, fs.ErrNotExist)
	}
	if err != nil {
		return FileInfo{}, fileError(r, "stat", p, err)
	}
	fi, err := parseStat(strings.TrimSpace(out))
	if err != nil {
		return FileInfo{}, fileError(r, "stat", p, err)
	}
	return fi, nil
}

// StatCommand is the command Stat sends for p, for Prefetch.
func StatCommand(p string) string {
	return Script(`[ -e "$1" ] || [ -L "$1" ] || exit 44; `+statFormat+`"$1"`, p)
}

// MkdirAll creates a directory and its parents; mode applies to the
// directory itself, 0 meaning 0755. What it creates is relabelled where
// SELinux tools exist (see mkdirs).
func MkdirAll(ctx context.Context, r Runner, p string, mode os.FileMode) error {
	if err := checkPath(p); err != nil {
		return fileError(r, "mkdir", p, err)
	}
	if mode == 0 {
		mode = 0o755
	}
	if _, err := r.Sudo(ctx, Script("set -e\n"+mkdirs+`cs_mkdir "$1" "$2"`, p, chmodArg(mode))); err != nil {
		return fileError(r, "mkdir", p, err)
	}
	return nil
}

// Rename moves from onto to, replacing it, and gives it a new mtime (see
// freshMtime).
func Rename(ctx context.Context, r Runner, from, to string) error {
	for _, p := range []string{from, to} {
		if err := checkPath(p); err != nil {
			return fileError(r, "rename", p, err)
		}
	}
	if _, err := r.Sudo(ctx, Script("set -e\nmv -f -- \"$1\" \"$2\"\n"+freshMtime, from, to)); err != nil {
		return fileError(r, "rename", from, err)
	}
	return nil
}

// Remove deletes a file or empty directory; a missing path is no error.
func Remove(ctx context.Context, r Runner, p string) error {
	if err := checkPath(p); err != nil {
		return fileError(r, "remove", p, err)
	}
	body := `if [ -d "$1" ] && [ ! -L "$1" ]; then rmdir -- "$1"; else rm -f -- "$1"; fi`
	if _, err := r.Sudo(ctx, Script(body, p)); err != nil {
		return fileError(r, "remove", p, err)
	}
	return nil
}

// RemoveAll deletes a path and everything under it; a missing path is no
// error. It refuses "/".
func RemoveAll(ctx context.Context, r Runner, p string) error {
	if err := checkPath(p); err != nil {
		return fileError(r, "remove", p, err)
	}
	if path.Clean(p) == "/" {
		return fileError(r, "remove", p, errors.New("refusing to remove /"))
	}
	if _, err := r.Sudo(ctx, Script(`rm -rf -- "$1"`, p)); err != nil {
		return fileError(r, "remove", p, err)
	}
	return nil
}
