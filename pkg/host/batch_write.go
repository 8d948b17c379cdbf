package host

// WriteHelpers is shell for scripts that write several files in one round
// trip (a front end's whole configuration, say) instead of one WriteFile
// each. It defines cs_sync FILE and cs_mkdir DIR [MODE] (durable and
// mkdirs above), and cs_put PATH MODE BASE64, which writes the decoded
// bytes as WriteFile does: to a temporary file beside PATH, synced, renamed
// into place, the new directories and the file relabelled. It returns
// non-zero on any failure, leaving no temporary file. The script runs as
// root, so the file is root's. A directory at PATH is refused (mv would
// move the file into it).
const WriteHelpers = durable + mkdirs + `cs_put() {
	if [ -d "$1" ]; then printf '%s is a directory\n' "$1" >&2; return 1; fi
	cs_dir=$(dirname -- "$1")
	cs_mkdir "$cs_dir" || return 1
	cs_t=$(mktemp "$cs_dir/.$(basename -- "$1").cargoship-XXXXXX") || return 1
	if ! { printf '%s' "$3" | base64 -d > "$cs_t" && chmod "$2" "$cs_t" && cs_sync "$cs_t" && mv -f -- "$cs_t" "$1"; }; then
		rm -f -- "$cs_t"
		return 1
	fi
	cs_sync "$cs_dir"
	if command -v restorecon >/dev/null 2>&1; then restorecon "$1" >/dev/null 2>&1 || true; fi
}
`
