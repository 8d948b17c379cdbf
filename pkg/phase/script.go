package phase

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// quoteScript makes a fixed script one shell word for `sh -c`. Scripts are
// constants of this package; values from documents never go into them, they
// are passed as quoted arguments instead.
func quoteScript(s string) string { return shell.Quote(s) }

// sha256Hex is the hex SHA-256 of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
