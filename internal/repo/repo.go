// Package repo finds cargoship's checkout, for the programs and suites that
// work inside it (hack/, magefiles/, test/), and shortens paths under the
// working directory for display.
package repo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is the module cargoship's go.mod declares.
const ModulePath = "github.com/colonel-byte/cargoship"

// ErrNotFound is wrapped by Root's error when no directory from the working
// directory up holds cargoship's go.mod.
var ErrNotFound = errors.New("not inside the cargoship checkout")

// Root walks up from the working directory to the directory whose go.mod
// declares ModulePath, so a program or test started anywhere in the
// checkout finds the same root.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if declaresModule(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: no go.mod of %s above %s", ErrNotFound, ModulePath, wd)
		}
	}
}

func declaresModule(gomod string) bool {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && f[1] == ModulePath {
			return true
		}
	}
	return false
}

// Rel shortens an absolute path under the working directory to a relative
// one, for display; any other path comes back as it is.
func Rel(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// RelArgs is args (a command line, for display) with Rel applied to every
// path, alone or as the value of a KEY=/path argument.
func RelArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && filepath.IsAbs(v) {
			out[i] = k + "=" + Rel(v)
		} else {
			out[i] = Rel(a)
		}
	}
	return out
}
