package phase

import "github.com/colonel-byte/cargoship/pkg/shell"

// quoteScript makes a fixed script one shell word for `sh -c`. Scripts are
// constants of this package; values from documents never go into them, they
// are passed as quoted arguments instead.
func quoteScript(s string) string { return shell.Quote(s) }
