package phase

import "regexp"

// The lock's shell steps (docs/apply.md, The lock). They run as root in a
// directory only root may write, and never follow a symbolic link: not to
// the directory, not to the lock file. Each takes the lock path as "$1".

// lockRefused is the exit code of a lock path that is not what cargoship
// made (a link, a directory where the file goes): waiting will not help.
const lockRefused = 46

// lockDirScript makes the lock's directory root's alone: created 0700
// where missing, handed back to root and 0700 where someone else owns it
// or opened it up, refused where it is a link or not a directory. Once it
// is root's 0700 no other user can add or swap what is inside it.
const lockDirScript = `f=$1
d=$(dirname -- "$f")
notdir() { echo "$d is a symbolic link or not a directory; cargoship keeps its lock there: remove it" >&2; exit 46; }
if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then notdir; fi
mkdir -p -m 700 -- "$d" 2>/dev/null || true
if [ -L "$d" ] || [ ! -d "$d" ]; then notdir; fi
if [ "$(stat -c '%u:%g %a' -- "$d")" != "0:0 700" ]; then chown -h 0:0 -- "$d" && chmod 700 -- "$d" || exit 1; fi
if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then
	echo "$f is a symbolic link or not a regular file; cargoship never follows one: remove it" >&2; exit 46
fi
`

// lockNoFlock is the exit code of a takeover on a host without flock(1):
// it cannot be made safe against a second run taking the same lock.
const lockNoFlock = 47

// lockSerialize holds flock(1) on the lock's directory, where flock
// exists, for the rest of the script: a takeover's read, compare and
// replace, and a holder's check and touch or check and remove, then never
// interleave. The kernel drops it with the script, however that ends.
const lockSerialize = `exec 9<"$d" || exit 1
if command -v flock >/dev/null 2>&1; then flock -x 9 || exit 1; else noflock=1; fi
`

// lockCreateScript creates the lock holding "$2" only if no file is there:
// noclobber opens with O_EXCL, and the checks above rule out a link.
const lockCreateScript = lockDirScript + lockSerialize + `umask 077
set -C
printf %s "$2" > "$f"`

// lockTakeoverScript replaces the stale lock a run judged stale with one
// holding "$2", as one step under the flock: only if the lock still holds
// what was read (sha256 "$3" of what lockReadScript printed) and is still
// "$4" seconds old or more, so its holder did not come back. The new lock
// is written beside it and renamed over it, so the path never stands
// empty for a create to fill. It prints "taken", "changed" (another run
// took it first, or its holder touched it) or "absent".
const lockTakeoverScript = lockDirScript + lockSerialize + `if [ -n "${noflock:-}" ]; then
	echo "this host has no flock(1), without which two runs could both take over its stale lock; if no cargoship runs against it, remove $f" >&2; exit 47
fi
m=$(stat -c %Y -- "$f" 2>/dev/null) || { echo absent; exit 0; }
c=$(head -c 256 -- "$f" 2>/dev/null) || { echo absent; exit 0; }
s=$(printf '%s' "$c" | sha256sum) || exit 1
if [ "${s%% *}" != "$3" ] || [ "$(( $(date +%s) - m ))" -lt "$4" ]; then echo changed; exit 0; fi
rm -f -- "$d"/.takeover.*
umask 077
t=$(mktemp -- "$d/.takeover.XXXXXX") || exit 1
if printf %s "$2" > "$t" && mv -f -- "$t" "$f"; then echo taken; else rm -f -- "$t"; exit 1; fi`

// lockReadScript prints "absent", "refused" (a link or a special file,
// never read), or the lock's age in seconds and at most 256 bytes of it.
// A lock its holder releases while this reads it is absent too: the
// faults walk's third apply once read a lock that vanished between the
// test and the read, and failed instead of taking it.
const lockReadScript = `f=$1
d=$(dirname -- "$f")
if [ -L "$d" ] || [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then echo refused; exit 0; fi
m=$(stat -c %Y -- "$f" 2>/dev/null) || { echo absent; exit 0; }
c=$(head -c 256 -- "$f" 2>/dev/null) || { echo absent; exit 0; }
echo "$(( $(date +%s) - m ))"
printf '%s' "$c"`

// lockHeldScript opens the lock's directory under the flock for a
// holder's step, and leaves (printing "absent") when it is gone: /run
// emptied by a boot, or the directory removed.
const lockHeldScript = `f=$1
d=$(dirname -- "$f")
if [ -L "$d" ] || [ ! -d "$d" ]; then echo absent; exit 0; fi
` + lockSerialize

// lockTouchScript touches the lock only while it holds this run's id
// "$2", and prints "ours"; otherwise "absent", "refused" (a link or a
// special file, never read), or "held" and at most 256 bytes of what the
// lock holds now.
const lockTouchScript = lockHeldScript + `if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then echo refused; exit 0; fi
c=$(head -c 256 -- "$f" 2>/dev/null) || { echo absent; exit 0; }
if [ "$c" = "$2" ]; then touch -c -- "$f" && echo ours; exit; fi
echo held
printf '%s' "$c"`

// lockReleaseScript removes the lock only where it still holds "$2".
const lockReleaseScript = lockHeldScript + `if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(head -c 256 -- "$f")" = "$2" ]; then rm -f -- "$f"; fi; true`

// runID is the form of a run's id in a lock ("host-pid"): anything else
// read from a lock is shown as unreadableHolder, never echoed.
var runID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

const unreadableHolder = "unreadable holder"

// holderName is what a message shows for a lock's holder.
func holderName(holder string) string {
	if runID.MatchString(holder) {
		return holder
	}
	return unreadableHolder
}
