package host

import "github.com/colonel-byte/cargoship/pkg/shell"

// Script is the command line `sh -c BODY sh ARGS...`: a fixed shell script
// run with arguments. Inside body the values arrive as "$1".."$N", quoted
// once by shell.Join, never pasted into the body, so a path or name from a
// document cannot become shell syntax. Quote every use ("$1", not $1).
func Script(body string, args ...string) string {
	return shell.Join(append([]string{"sh", "-c", body, "sh"}, args...)...)
}
