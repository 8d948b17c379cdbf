package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// probeScript prints the file's stat line and, for a regular file, its
// sha256: what WriteFile needs to decide, in one round trip.
const probeScript = `if [ -e "$1" ]; then ` + statFormat + `"$1"; if [ -f "$1" ]; then sha256sum < "$1"; fi; fi`

// writeScript writes stdin to a temp file beside the target, sets its
// owner and mode, and renames it into place, so a reader never sees half a
// file. The temp file is mktemp's 0600 until chmod: a secret is never
// readable. chown goes before chmod, which would otherwise lose a setuid
// or setgid bit. A rename that fails is an error with mv's message, unless
// $4 is "inplace": a bind-mounted file (/etc/hosts in a container) cannot
// be renamed onto, only rewritten where it is. Then restorecon gives the
// file the label its path should have (see restorecon).
const writeScript = `set -e
` + durable + mkdirs + `p=$1 mode=$2 owner=$3 how=$4
d=$(dirname -- "$p")
cs_mkdir "$d"
t=$(mktemp "$d/.$(basename -- "$p").cargoship-XXXXXX")
trap 'rm -f -- "$t"' EXIT
cat > "$t"
[ -z "$owner" ] || chown -- "$owner" "$t"
chmod "$mode" "$t"
cs_sync "$t"
if ! err=$(mv -f -- "$t" "$p" 2>&1); then
	[ "$how" = inplace ] || { printf '%s\n' "$err" >&2; exit 1; }
	[ -z "$owner" ] || chown -- "$owner" "$p"
	chmod "$mode" "$p"
	cat -- "$t" > "$p"
fi
cs_sync "$d"
` + restorecon

// durable defines cs_sync FILE: the file's bytes reach the disk before the
// rename that publishes it, so a power cut leaves the old file or the new
// one, never an empty or partial one under the final name. sync with file
// arguments is coreutils 8.24 and busybox 1.30; older ones sync everything.
const durable = `cs_sync() { sync -- "$1" 2>/dev/null || sync; }
`

// restorecon relabels "$p" where SELinux tools exist, best effort: a file
// created in a directory gets that directory's type, not the one the
// policy gives its path (/etc/hosts is net_conf_t, /etc etc_t). Hosts
// without SELinux have no restorecon, or one that fails harmlessly.
const restorecon = `if command -v restorecon >/dev/null 2>&1; then restorecon "$p" >/dev/null 2>&1 || true; fi`

// mkdirs defines cs_mkdir DIR [MODE]: mkdir -p, then restorecon -R on the
// topmost directory it created. A new directory gets its parent's type,
// not the one the policy names for its path (/etc/cargoship-e2e would be
// etc_t), and relabelling only the file leaves its directory mislabelled
// for the next run's SELinux phase to find. Directories that existed keep
// their labels.
const mkdirs = `cs_mkdir() {
	cs_new= cs_d=$1
	while [ ! -e "$cs_d" ]; do cs_new=$cs_d; cs_d=$(dirname -- "$cs_d"); done
	if [ -n "${2:-}" ]; then mkdir -p -m "$2" -- "$1"; else mkdir -p -- "$1"; fi
	if [ -n "$cs_new" ] && command -v restorecon >/dev/null 2>&1; then restorecon -R "$cs_new" >/dev/null 2>&1 || true; fi
}
`

// fixScript sets owner and mode of a file whose content is already right.
const fixScript = `set -e; [ -z "$3" ] || chown -- "$3" "$1"; chmod "$2" "$1"`

// WriteOption adjusts WriteFile.
type WriteOption func(*writeOptions)

type writeOptions struct{ inPlace bool }

// InPlace lets WriteFile rewrite the file where it is when renaming onto it
// fails, as it does for a bind-mounted /etc/hosts in a container
// (docs/reference/hosts.md §4.4). A reader may then see a half-written
// file, so only files that need it ask for it; without it a failed rename
// is an error and the file is left as it was.
func InPlace() WriteOption { return func(o *writeOptions) { o.inPlace = true } }

// WriteFile writes data to p as root: atomically (a temp file beside p,
// renamed onto it), creating parent directories, and only when something
// differs, so a second run reports changed=false. mode 0 keeps an existing
// file's mode (0644 for a new one); owner is "user" or "user:group", ""
// keeping an existing file's owner (root for a new one). A written file is
// relabelled with restorecon where SELinux tools exist.
func WriteFile(ctx context.Context, r Runner, p string, data []byte, mode os.FileMode, owner string, opts ...WriteOption) (bool, error) {
	var o writeOptions
	for _, f := range opts {
		f(&o)
	}
	if err := checkPath(p); err != nil {
		return false, fileError(r, "write", p, err)
	}
	if err := checkOwner(owner); err != nil {
		return false, fileError(r, "write", p, err)
	}
	cur, exists, sum, err := probe(ctx, r, p)
	if err != nil {
		return false, fileError(r, "write", p, err)
	}
	if exists && !cur.IsRegular() {
		return false, fileError(r, "write", p, fmt.Errorf("is a %s, not a regular file", fileKind(cur)))
	}
	mode, owner = settle(cur, exists, mode, owner)
	digest := sha256.Sum256(data)
	if exists && sum == hex.EncodeToString(digest[:]) {
		if permBits(cur.Mode) == permBits(mode) && ownerMatches(owner, cur) {
			return false, nil
		}
		if _, err := r.Sudo(ctx, Script(fixScript, p, chmodArg(mode), owner)); err != nil {
			return false, fileError(r, "write", p, err)
		}
		return true, nil
	}
	how := "rename"
	if o.inPlace {
		how = "inplace"
	}
	if _, err := r.Sudo(ctx, Script(writeScript, p, chmodArg(mode), owner, how), WithStdin(bytes.NewReader(data))); err != nil {
		return false, fileError(r, "write", p, err)
	}
	return true, nil
}

// WriteFileProbe is the command WriteFile first sends for p, for Prefetch.
func WriteFileProbe(p string) string { return Script(probeScript, p) }

// probe stats p and hashes it when it is a regular file.
func probe(ctx context.Context, r Runner, p string) (fi FileInfo, exists bool, sum string, err error) {
	out, err := r.Sudo(ctx, WriteFileProbe(p))
	if err != nil {
		return fi, false, "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] == "" {
		return fi, false, "", nil
	}
	if fi, err = parseStat(lines[0]); err != nil {
		return fi, false, "", err
	}
	if len(lines) > 1 {
		if sum, err = parseSum(lines[1]); err != nil {
			return fi, false, "", err
		}
	}
	return fi, true, sum, nil
}

// settle fills a zero mode and an empty owner from the existing file.
func settle(cur FileInfo, exists bool, mode os.FileMode, owner string) (os.FileMode, string) {
	if mode == 0 {
		mode = 0o644
		if exists {
			mode = permBits(cur.Mode)
		}
	}
	if owner == "" && exists {
		owner = fmt.Sprintf("%d:%d", cur.UID, cur.GID)
	}
	return mode, owner
}

func fileKind(fi FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode&os.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}
