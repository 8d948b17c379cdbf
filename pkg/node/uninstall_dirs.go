package node

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// mountsUnder defines cs_mounts DIR: the mount points at or under DIR,
// deepest first, decoded from /proc/self/mounts' octal escapes (\040 is a
// space), as the engines' killall scripts find what to unmount. The C
// locale keeps awk's %c one byte.
const mountsUnder = `cs_mounts() {
  LC_ALL=C awk -v d="$1" '
    function dec(s,  o, i, c) {
      o = ""
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\" && substr(s, i + 1, 3) ~ /^[0-7][0-7][0-7]$/) {
          o = o sprintf("%c", substr(s, i + 1, 1) * 64 + substr(s, i + 2, 1) * 8 + substr(s, i + 3, 1))
          i += 3
        } else o = o c
      }
      return o
    }
    { m = dec($2); if (m == d || index(m, d "/") == 1) print m }' /proc/self/mounts | sort -r -u
}
`

// dirsScript goes through its directory arguments after $1 (run or plan)
// and prints, per directory I (from 1), lines "I WORD [PATH]": "gone"
// when absent; with plan "would", or "wouldempty" where a file system is
// mounted at the directory itself; with run, "unmounted M" or "busy M" for
// each file system mounted below it, then "removed", "emptied" (a file
// system mounted at the directory itself: a data disk, a container's
// volume, which stays mounted, emptied, so its fstab line still finds
// it), "left M" when M is still mounted below (the directory is then not
// touched) or "left" when rm could not remove it.
//
// A mount below is unmounted, never emptied: what it holds stays on its
// file system, as the engines' killall scripts leave it. rm stays on the
// directory's own file system where it can (GNU's --one-file-system;
// busybox has none, and nothing is mounted below by then).
const dirsScript = mountsUnder + `do=$1; shift
cs_rm() { if [ -n "$ofs" ]; then rm -rf --one-file-system -- "$@"; else rm -rf -- "$@"; fi; }
ofs=
if rm --help 2>&1 | grep -q -e --one-file-system; then ofs=--one-file-system; fi
i=0
for d in "$@"; do
  i=$((i+1))
  if [ ! -e "$d" ] && [ ! -L "$d" ]; then echo "$i gone"; continue; fi
  # mounts are listed by the real path: the directory's parents may be
  # links (/var/lib/rancher on a data disk); a link itself is only removed
  rd=
  if [ ! -L "$d" ]; then rd=$(cd -P -- "$d" 2>/dev/null && pwd -P) || rd=; fi
  at=
  if [ -n "$rd" ] && cs_mounts "$rd" | grep -q -F -x -e "$rd"; then at=1; fi
  if [ "$do" != run ]; then
    if [ -n "$at" ]; then echo "$i wouldempty"; else echo "$i would"; fi
    continue
  fi
  [ -z "$rd" ] || cs_mounts "$rd" | grep -v -F -x -e "$rd" | while IFS= read -r m; do
    if umount -- "$m" 2>/dev/null || umount -l -- "$m" 2>/dev/null; then echo "$i unmounted $m"; else echo "$i busy $m"; fi
  done
  still=
  [ -z "$rd" ] || still=$(cs_mounts "$rd" | grep -v -F -x -e "$rd" | head -n 1)
  if [ -n "$still" ]; then echo "$i left $still"; continue; fi
  if [ -n "$at" ]; then
    for e in "$rd"/* "$rd"/.[!.]* "$rd"/..?*; do
      if [ -e "$e" ] || [ -L "$e" ]; then cs_rm "$e"; fi
    done
    if [ -z "$(ls -A -- "$rd")" ]; then echo "$i emptied"; else echo "$i left"; fi
    continue
  fi
  cs_rm "$d"
  if [ -e "$d" ] || [ -L "$d" ]; then echo "$i left"; else echo "$i removed"; fi
done`

// dirResult is what dirsScript said of one directory.
type dirResult struct {
	dir    string
	status string   // gone, would, wouldempty, removed, emptied, left
	mounts []string // unmounted there
	held   string   // run: still mounted there, so the directory was left
}

// runDirs runs dirsScript over dirs on r: do is "run" or "plan".
func runDirs(ctx context.Context, r host.Runner, do string, dirs []string) ([]dirResult, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	out, err := r.Sudo(ctx, host.Script(dirsScript, append([]string{do}, dirs...)...))
	if err != nil {
		return nil, fmt.Errorf("removing the engine's directories: %w", err)
	}
	res := make([]dirResult, len(dirs))
	for i, d := range dirs {
		res[i].dir = d
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		n, rest, _ := strings.Cut(l, " ")
		word, m, _ := strings.Cut(rest, " ")
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > len(dirs) {
			return nil, fmt.Errorf("removing the engine's directories: unexpected output %q", l)
		}
		d := &res[i-1]
		switch word {
		case "unmounted":
			d.mounts = append(d.mounts, m)
		case "busy":
		case "left":
			d.status, d.held = word, m
		default:
			d.status = word
		}
	}
	for _, d := range res {
		if d.status == "" {
			return nil, fmt.Errorf("removing the engine's directories: no answer for %s: %q", d.dir, out)
		}
	}
	return res, nil
}
