package cli

import (
	"fmt"
	"io"
	"path"
	"sort"

	"github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
)

// doubleNote is said in every help text: this binary is not the engine.
const doubleNote = `This is the cargoship TEST ENGINE, a test double: it is not %s. It behaves as
%s documents itself where cargoship can see it (files, units, ports, joining,
the API kubectl uses) and runs no containers. See docs/test-engine.md.
`

func printHelp(w io.Writer, argv0 string, fl flavor.Flavor) {
	name := path.Base(argv0)
	_, _ = fmt.Fprintf(w, `NAME:
   %[1]s - cargoship test engine imitating %[2]s

USAGE:
   %[1]s [global options] command [command options] [arguments...]

VERSION:
   %[3]s (%[4]s)

COMMANDS:
   server   Run management server
   agent    Run node agent
`, name, fl.Name, buildinfo.Version, commit(fl))
	if fl.Name == "k3s" {
		_, _ = fmt.Fprintln(w, "   kubectl  Run the real kubectl with the admin kubeconfig")
	}
	_, _ = fmt.Fprintf(w, `   help, h  Shows a list of commands or help for one command

GLOBAL OPTIONS:
   --debug        (logging) Turn on debug logs [$%s]
   --help, -h     show help
   --version, -v  print the version

`, fl.Env("DEBUG"))
	_, _ = fmt.Fprintf(w, doubleNote, fl.Name, fl.Name)
}

func printCommandHelp(w io.Writer, argv0 string, fl flavor.Flavor, command string) {
	table := flagsFor(fl, command)
	var names []string
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	_, _ = fmt.Fprintf(w, "NAME:\n   %s %s\n\nUSAGE:\n   %s %s [OPTIONS]\n\nOPTIONS:\n", path.Base(argv0), command, path.Base(argv0), command)
	for _, n := range names {
		f := table[n]
		flagText := "--" + f.name
		if f.alias != "" {
			flagText += ", -" + f.alias
		}
		switch f.kind {
		case kindString:
			flagText += " value"
		case kindSlice:
			flagText += " value (repeatable)"
		}
		note := "accepted, no effect in the test engine"
		if f.modelled {
			note = "modelled"
		}
		env := ""
		if f.env != "" {
			env = " [$" + fl.Env(f.env) + "]"
		}
		_, _ = fmt.Fprintf(w, "   %-48s %s%s\n", flagText, note, env)
	}
	_, _ = fmt.Fprintf(w, "\nEvery option is also a key of %s (and %s.d/*.yaml).\n\n", fl.ConfigFile(), fl.ConfigFile())
	_, _ = fmt.Fprintf(w, doubleNote, fl.Name, fl.Name)
}
