package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// relayLinesScript counts the relay lines in "$1" (and with $2 = remove,
// drops every one of them) and prints the count. A missing file has none.
const relayLinesScript = `set -e
` + akEdit + `ak=$1
[ ! -L "$ak" ] || ak=$(readlink -f -- "$ak")
[ -f "$ak" ] || { echo 0; exit 0; }
n=$(awk '$NF ~ /^` + relayMarker + `/ { n++ } END { print n + 0 }' < "$ak")
if [ "$2" = remove ] && [ "$n" -gt 0 ]; then
	drop= keep= cutoff= add=
	cs_aklock
	cs_akedit
fi
echo "$n"`

// RelayLines counts the relay lines in p's authorized_keys file on r:
// what a relay still under way holds, or what a killed run left behind.
// With remove it also drops them, every other byte of the file staying
// as it was. `cargoship reset` removes them (a reset holds the cluster's
// lock, so no relay of that cluster is under way).
func RelayLines(ctx context.Context, r Runner, p Peer, remove bool) (int, error) {
	mode := "count"
	if remove {
		mode = "remove"
	}
	out, err := r.Sudo(ctx, Script(relayLinesScript, p.AuthorizedKeys, mode))
	if err != nil {
		return 0, hostError(ctx, r, "reading the relay keys in "+p.AuthorizedKeys, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("%s: counting the relay keys in %s: unexpected %q", r, p.AuthorizedKeys, out)
	}
	return n, nil
}
