package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// akEdit defines cs_akedit: rewrite "$ak" without the relay lines the
// awk filter drops ($drop's alone when set, else any whose id is not in
// $keep and was not granted at or after $cutoff, in Unix seconds: an id
// without a time is old), then append "$add" when set. Every other byte stays: lines are
// rejoined as they were, and a file that did not end in a newline still
// does not (the added line then goes after a newline of its own, so that
// removing it restores the file exactly). The new file is renamed into
// place, with the old one's owner and mode, so sshd never reads half of
// it; cs_aklock serializes edits where flock exists. The owner is set
// only when it differs from whoever edits (see akAs), with -h: the new
// file is in a directory that may be the login user's.
const akEdit = `cs_aklock() {
	if command -v flock >/dev/null 2>&1; then
		exec 9<"$(dirname -- "$ak")"
		flock -w 30 9 || { echo "$ak is locked by another edit" >&2; exit 1; }
	fi
}
cs_akedit() {
	cs_nl=1
	[ -z "$(tail -c 1 -- "$ak")" ] || cs_nl=0
	cs_t=$(mktemp -- "$ak.cargoship-XXXXXX")
	trap 'rm -f -- "$cs_t"' EXIT
	keep=${keep:-} drop=${drop:-} cutoff=${cutoff:-} nl=$cs_nl awk '
	function young(m) {
		if (ENVIRON["cutoff"] == "" || !match(m, /^[0-9]+-/)) return 0
		return substr(m, 1, RLENGTH - 1) + 0 >= ENVIRON["cutoff"] + 0
	}
	{
		m = ""
		if ($NF ~ /^` + relayMarker + `/) m = substr($NF, 17)
		if (m != "" && (ENVIRON["drop"] != "" ? m == ENVIRON["drop"] : index(" " ENVIRON["keep"] " ", " " m " ") == 0 && !young(m))) next
		if (n++) printf "\n"
		printf "%s", $0
	}
	END { if (n && ENVIRON["nl"] == 1) printf "\n" }' < "$ak" > "$cs_t"
	if [ -n "${add:-}" ]; then
		if [ -s "$cs_t" ] && [ "$cs_nl" = 0 ]; then printf '\n%s' "$add" >> "$cs_t"; else printf '%s\n' "$add" >> "$cs_t"; fi
	fi
	cs_o=$(stat -c %u:%g -- "$ak")
	[ "$cs_o" = "$(id -u):$(id -g)" ] || chown -h -- "$cs_o" "$cs_t"
	chmod -- "$(stat -c %a -- "$ak")" "$cs_t"
	mv -f -- "$cs_t" "$ak"
	p=$ak
	` + restorecon + `
}
`

// akScript is every edit of a relay's authorized_keys file, run as
// whoever akAs picks: "$1" is grant, revoke, count or remove, "$2" the
// file, "$3" the login user; then the edit's own arguments. A grant makes
// the file (and its directory) when missing and prints "made-file" and
// "made-dir" for the revoke to remove again, which it does when they are
// empty once the line is gone. A symlinked file is edited where it
// points: akAs runs that edit as the login user, so the link reaches no
// further than the user could reach anyway.
const akScript = `set -e
op=$1 ak=$2 user=$3
shift 3
` + akEdit + `cs_own() {
	if [ "$(id -u)" = 0 ] && [ "$(id -u -- "$user")" != 0 ]; then chown -h -- "$user:$(id -g -- "$user")" "$1"; fi
}
[ ! -L "$ak" ] || ak=$(readlink -f -- "$ak")
case $op in
grant)
	add=$1 cutoff=$2 keep=$3 drop=
	d=$(dirname -- "$ak")
	if [ ! -d "$d" ]; then
		(umask 077 && mkdir -p -- "$d")
		cs_own "$d"
		echo made-dir
	fi
	cs_aklock
	if [ ! -e "$ak" ]; then
		(umask 077 && : > "$ak")
		cs_own "$ak"
		echo made-file
	fi
	cs_akedit ;;
revoke)
	drop=$1 keep= add= cutoff=
	if [ -f "$ak" ]; then
		cs_aklock
		cs_akedit
		if [ "$2" = 1 ] && [ ! -s "$ak" ]; then
			rm -f -- "$ak"
			[ "$3" != 1 ] || rmdir -- "$(dirname -- "$ak")" 2>/dev/null || true
		fi
	fi ;;
count|remove)
	[ -f "$ak" ] || { echo 0; exit 0; }
	n=$(awk '$NF ~ /^` + relayMarker + `/ { n++ } END { print n + 0 }' < "$ak")
	if [ "$op" = remove ] && [ "$n" -gt 0 ]; then
		drop= keep= cutoff= add=
		cs_aklock
		cs_akedit
	fi
	echo "$n" ;;
esac`

// akAs defines cs_akas SCRIPT ARGS...: it runs akScript as root only where
// root alone controls the authorized_keys file "$ak" - a root-owned
// directory no one else may write, holding no symlink at the file - and
// as the login user $user where the directory (or the nearest one that
// exists) is the user's or the file is a link. The user's ~/.ssh is the
// user's to change at any moment: as root, a rename or a link planted
// there between two steps would turn an edit into a write, chown or
// chmod anywhere on the host. Any other owner is refused.
const akAs = `cs_akas() {
	cs_d=$(dirname -- "$ak")
	while [ ! -e "$cs_d" ] && [ ! -L "$cs_d" ]; do cs_d=$(dirname -- "$cs_d"); done
	cs_u=$(id -u -- "$user")
	set -- "$(stat -c %u -- "$cs_d")" "$(stat -c %a -- "$cs_d")" "$@"
	if [ "$1" = 0 ] && [ $((0$2 & 022)) = 0 ] && [ ! -L "$cs_d" ] && [ ! -L "$ak" ]; then
		shift 2
		sh -c "$@"
	elif [ "$1" = "$cs_u" ] || [ -L "$ak" ] || [ -L "$cs_d" ]; then
		shift 2
		if command -v runuser >/dev/null 2>&1; then
			runuser -u "$user" -- sh -c "$@"
		else
			setpriv --reuid="$cs_u" --regid="$(id -g -- "$user")" --init-groups -- sh -c "$@"
		fi
	else
		echo "$cs_d, which holds $user's authorized_keys, belongs to uid $1 with mode $2: neither root's alone nor $user's, so cargoship will not edit it" >&2
		exit 1
	fi
}
`

// grantScript starts the part file empty, root's and private, records the
// transfer's id beside it (the forced command writes only while that
// record holds the id; see relayCommand), stamps the key line with an
// expiry-time of the host's own clock and zone, and has akScript add it
// (dropping stale relay lines: granted before $5 and not this process's).
const grantScript = `set -e
` + mkdirs + akAs + `ak=$1 user=$2 part=$3 add=$4 cutoff=$5 id=$6 life=$7 grant=$8 edit=$9
shift 9
keep="$*"
cs_mkdir "$(dirname -- "$part")"
rm -f -- "$part" "$grant"
(umask 077 && : > "$part" && printf '%s\n' "$id" > "$grant")
chown 0:0 "$part" "$grant"
chmod 600 "$part" "$grant"
exp=$(date -d "+$life seconds" +%Y%m%d%H%M%S)
cs_akas "$edit" sh grant "$ak" "$user" "expiry-time=\"$exp\",$add" "$cutoff" "$keep"`

// relayMade is what a grant created, for its revoke to remove.
type relayMade struct{ file, dir bool }

func grant(ctx context.Context, to Runner, p Peer, part, line, id string, life time.Duration, keep []string) (relayMade, error) {
	cutoff := strconv.FormatInt(time.Now().Add(-relayStaleAfter).Unix(), 10)
	args := append([]string{p.AuthorizedKeys, p.User, part, line, cutoff, id, strconv.Itoa(int(life.Seconds())), part + RelayGrantSuffix, akScript}, keep...)
	out, err := to.Sudo(ctx, Script(grantScript, args...))
	if err != nil {
		return relayMade{}, hostError(ctx, to, "authorizing the relay key", err)
	}
	var m relayMade
	for _, l := range strings.Fields(out) {
		m.file = m.file || l == "made-file"
		m.dir = m.dir || l == "made-dir"
	}
	return m, nil
}

// revokeScript first voids the grant record, so no session the key opened
// may start writing any more, then has akScript remove the transfer's
// line (and the file and directory the grant made, when they are empty
// again), removes a part file a failed transfer left empty, and prints
// the bytes the part file holds. The void record stays while the part
// does: it marks a part a relay wrote, which Upload never resumes and
// puts in place only through a copy (finishScript).
const revokeScript = `set -e
` + akAs + `ak=$1 part=$2 drop=$3 user=$7 grant=$8 edit=$9
[ ! -e "$grant" ] || echo revoked > "$grant"
if [ -e "$ak" ] || [ -L "$ak" ]; then
	cs_akas "$edit" sh revoke "$ak" "$user" "$drop" "$4" "$5"
fi
if [ "$6" != 1 ] && [ -f "$part" ] && [ ! -s "$part" ]; then rm -f -- "$part" "$grant"; fi
if [ -f "$part" ]; then stat -c %s -- "$part"; else echo 0; fi`

func revoke(ctx context.Context, to Runner, p Peer, part, id string, m relayMade, ok bool) (int64, error) {
	out, err := to.Sudo(ctx, Script(revokeScript, p.AuthorizedKeys, part, id, flag(m.file), flag(m.dir), flag(ok), p.User, part+RelayGrantSuffix, akScript))
	if err != nil {
		return 0, hostError(ctx, to, "removing the relay key", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: unexpected size of %s: %q", to, part, out)
	}
	return n, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}
