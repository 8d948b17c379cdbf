package hosttest

import (
	"os"
	"path/filepath"
	"testing"
)

// ServeTools lets the test binary stand in for tools written in Go: when
// it was started under one of the names (through a link Tools made), it
// runs that tool with its arguments and exits with the code it returns.
// Call it first thing in TestMain.
func ServeTools(tools map[string]func(args []string) int) {
	if run, ok := tools[filepath.Base(os.Args[0])]; ok {
		os.Exit(run(os.Args[1:]))
	}
}

// Tools returns a Local whose PATH finds the test binary first under each
// of names, so a command the code under test renders reaches the tool
// ServeTools runs, through a real shell, quoting and all.
func Tools(t testing.TB, names ...string) *Local {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.Symlink(exe, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return &Local{Env: []string{"PATH=" + dir + ":" + os.Getenv("PATH")}}
}
