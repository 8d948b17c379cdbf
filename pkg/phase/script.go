package phase

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// quoteScript makes a fixed script one shell word for `sh -c`. Scripts are
// constants of this package; values from documents never go into them, they
// are passed as quoted arguments instead.
func quoteScript(s string) string { return shell.Quote(s) }

// tcpProbe succeeds when host:port accepts a TCP connection within 3 s.
// It needs bash (for /dev/tcp) or python3, one of which every supported
// host has.
func tcpProbe(addr string, port int) string {
	script := `if command -v bash >/dev/null 2>&1; then timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2"; ` +
		`else python3 -c 'import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 3)' "$1" "$2"; fi`
	return shell.Join("sh", "-c", script, "probe", addr, strconv.Itoa(port))
}

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
