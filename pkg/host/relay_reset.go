package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// relayLinesScript counts the relay lines in "$1" (and with $2 = remove,
// drops every one of them) and prints the count, through akScript as akAs
// picks. A missing file has none.
const relayLinesScript = `set -e
` + akAs + `ak=$1 user=$3
if [ -e "$ak" ] || [ -L "$ak" ]; then cs_akas "$4" sh "$2" "$ak" "$user"; else echo 0; fi`

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
	out, err := r.Sudo(ctx, Script(relayLinesScript, p.AuthorizedKeys, mode, p.User, akScript))
	if err != nil {
		return 0, hostError(ctx, r, "reading the relay keys in "+p.AuthorizedKeys, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("%s: counting the relay keys in %s: unexpected %q", r, p.AuthorizedKeys, out)
	}
	return n, nil
}
