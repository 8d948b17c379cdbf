package hosttest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Stubs is a directory of stand-in executables for tools this machine
// lacks (dnf, firewall-cmd, rc-service ...). Each records how it was
// called and answers with the output and exit code a test set for it, so
// a rendered command goes through a real shell, quoting and all.
type Stubs struct {
	Dir string
}

// NewStubs creates stubs named names in dir.
func NewStubs(dir string, names ...string) (*Stubs, error) {
	s := &Stubs{Dir: dir}
	for _, n := range names {
		script := "#!/bin/sh\n" +
			"d=" + shell.Quote(dir) + "\n" +
			"{ printf '%s' \"$(basename \"$0\")\"; for a in \"$@\"; do printf '\\037%s' \"$a\"; done; printf '\\n'; } >> \"$d/calls.log\"\n" +
			"n=$(basename \"$0\")\n" +
			"[ -f \"$d/$n.$1.rc\" ] && n=\"$n.$1\"\n" +
			"[ -f \"$d/$n.out\" ] && cat \"$d/$n.out\"\n" +
			"exit $(cat \"$d/$n.rc\" 2>/dev/null || echo 0)\n"
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Set makes stub name print out and exit with code.
func (s *Stubs) Set(name, out string, code int) error {
	if err := os.WriteFile(filepath.Join(s.Dir, name+".out"), []byte(out), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, name+".rc"), []byte(strconv.Itoa(code)), 0o644)
}

// SetFor makes stub name answer differently when its first argument is
// arg.
func (s *Stubs) SetFor(name, arg, out string, code int) error {
	return s.Set(name+"."+arg, out, code)
}

// Calls returns every recorded call as its argv, program name first.
func (s *Stubs) Calls() ([][]string, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "calls.log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var calls [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		calls = append(calls, strings.Split(line, "\x1f"))
	}
	return calls, nil
}

// Runner returns a Local runner that finds the stubs first on PATH.
func (s *Stubs) Runner() *Local {
	return &Local{Env: []string{"PATH=" + s.Dir + ":" + os.Getenv("PATH")}}
}
