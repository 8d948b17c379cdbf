package node

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// removal is one path a reset takes off a host when it is still what the
// rule expects; never a directory, never through a directory that
// resolves elsewhere than dir.
type removal struct {
	// kind is what the path must be: placedFile (a regular file whose
	// sha256 is one of want's, space-separated), placedLink (a link pointing at want, any link when
	// want is ""), or anyFile (a regular file or a link).
	kind, path, want string
	// dir is where the path's directory must resolve (`cd -P`); "" does
	// not check: the engine's own files in the system's directories.
	dir string
	// quiet leaves a path that is not of kind without a note: k3s's
	// kubectl that is a real binary is the host's, not news.
	quiet bool
}

// anyFile is a removal kind: a regular file or a link, whatever it holds.
const anyFile = "any"

// removeScript goes through its arguments four at a time (kind, path,
// want, dir) and prints one line for each: "gone" (not there), "would"
// (plan: would be removed), "removed", or "left REASON". The check and
// the rm run inside the directory once `cd -P` has taken it, by the
// file's own name: a directory swapped for a link afterwards is not
// followed. rm has no -r: a directory is never removed from this list.
const removeScript = `do=$1; shift
nl='
'
while [ "$#" -ge 4 ]; do
  kind=$1 p=$2 want=$3 dir=$4; shift 4
  (
    cd -P -- "$(dirname -- "$p")" 2>/dev/null || { echo gone; exit 0; }
    b=./$(basename -- "$p")
    [ -e "$b" ] || [ -L "$b" ] || { echo gone; exit 0; }
    here=$(pwd -P)
    if [ -n "$dir" ] && [ "$here" != "$dir" ]; then
      case $here in *"$nl"*) here='(a name with a newline)' ;; esac
      echo "left parent $here"; exit 0
    fi
    case $kind in
    file)
      if [ -L "$b" ] || [ ! -f "$b" ]; then echo "left notfile"; exit 0; fi
      sum=$(sha256sum < "$b") || { echo "left unreadable"; exit 0; }
      case " $want " in *" ${sum%% *} "*) ;; *) echo "left changed"; exit 0 ;; esac ;;
    link)
      [ -L "$b" ] || { echo "left notlink"; exit 0; }
      [ -z "$want" ] || [ "$(readlink -- "$b")" = "$want" ] || { echo "left retargeted"; exit 0; } ;;
    *)
      if [ ! -L "$b" ] && [ ! -f "$b" ]; then echo "left notfile"; exit 0; fi ;;
    esac
    [ "$do" = run ] || { echo would; exit 0; }
    if rm -f -- "$b" && [ ! -e "$b" ] && [ ! -L "$b" ]; then echo removed; else echo "left failed"; fi
  )
done`

// removeResult is what removeScript said of one removal.
type removeResult struct {
	removal
	status string // gone, would, removed, left
	reason string // why it was left
}

// runRemovals runs removeScript over rs on h: do is "run" to remove,
// "plan" to only say what would go.
func runRemovals(ctx context.Context, r host.Runner, do string, rs []removal) ([]removeResult, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	args := []string{do}
	for _, rm := range rs {
		args = append(args, rm.kind, rm.path, rm.want, rm.dir)
	}
	out, err := r.Sudo(ctx, host.Script(removeScript, args...))
	if err != nil {
		return nil, fmt.Errorf("removing what cargoship placed: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(rs) {
		return nil, fmt.Errorf("removing what cargoship placed: %d answers for %d paths: %q", len(lines), len(rs), out)
	}
	res := make([]removeResult, len(rs))
	for i, l := range lines {
		status, reason, _ := strings.Cut(l, " ")
		res[i] = removeResult{removal: rs[i], status: status, reason: reason}
	}
	return res, nil
}

// why says why a path was (or would be) left, "" when it was not or
// needs no word.
func (r removeResult) why() string {
	if r.status != "left" || r.quiet && (r.reason == "notlink" || r.reason == "notfile") {
		return ""
	}
	if d, ok := strings.CutPrefix(r.reason, "parent "); ok {
		return fmt.Sprintf("its directory resolves to %s, not %s as when it was placed (a link is not followed)", d, r.dir)
	}
	if why, ok := leftWhy[r.reason]; ok {
		return why
	}
	return r.reason
}

// leftWhy words removeScript's reasons for leaving a path.
var leftWhy = map[string]string{
	"notfile":    "it is not a regular file or a link (a directory is never removed from this list)",
	"notlink":    "it is no longer a symbolic link",
	"changed":    "its content changed since cargoship placed it",
	"unreadable": "it could not be read to compare with what cargoship placed",
	"retargeted": "the link points elsewhere than where cargoship pointed it",
	"failed":     "rm could not remove it",
}

// placedRemovals are the removals for what the record lists: a file and
// its staged copy only with the recorded hash, what a broken upload left
// beside them where it is a file or a link, a link only pointing where it was pointed;
// each only in the directory it was placed in.
func placedRemovals(rec placedRecord) []removal {
	var out []removal
	for _, e := range rec.Placed {
		if !recordable(e.Path) || e.Dir == "" {
			continue
		}
		switch e.Kind {
		case placedFile:
			staged, sums := StagedPath(e.Path), strings.Join(e.hashes(), " ")
			out = append(out,
				removal{kind: placedFile, path: e.Path, want: sums, dir: e.Dir},
				removal{kind: placedFile, path: staged, want: sums, dir: e.Dir})
			for _, p := range leftovers(e.Path) {
				out = append(out, removal{kind: anyFile, path: p, dir: e.Dir})
			}
		case placedLink:
			out = append(out, removal{kind: placedLink, path: e.Path, want: e.Target, dir: e.Dir})
		}
	}
	return out
}

// guessedRemovals are the removals for a host with no record (placed by
// an older cargoship): the paths the package and the inventory name,
// their staged copies and what broken uploads left, each only where it is a
// regular file or a link and its directory resolves to itself.
func guessedRemovals(paths []string) []removal {
	var out []removal
	for _, p := range paths {
		p = path.Clean(p)
		if !recordable(p) {
			continue
		}
		for _, q := range append([]string{p, StagedPath(p)}, leftovers(p)...) {
			out = append(out, removal{kind: anyFile, path: q, dir: path.Dir(p)})
		}
	}
	return out
}

// leftovers are what a broken upload of p, or of its staged copy, leaves
// beside it: the partial file, and a relay's grant record next to that.
func leftovers(p string) []string {
	var out []string
	for _, q := range []string{p, StagedPath(p)} {
		out = append(out, q+host.PartSuffix, q+host.PartSuffix+host.RelayGrantSuffix)
	}
	return out
}
