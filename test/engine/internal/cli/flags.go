package cli

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
)

// Values are the parsed flags of one command.
type Values struct {
	set   map[string][]string
	table map[string]flag
}

// String is a string flag's value (the last one given wins).
func (v Values) String(name string) string {
	s := v.set[name]
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// Strings is a list flag's values.
func (v Values) Strings(name string) []string { return v.set[name] }

// Bool is a boolean flag's value.
func (v Values) Bool(name string) bool { return v.String(name) == "true" }

// IsSet reports whether the flag was given at all.
func (v Values) IsSet(name string) bool { _, ok := v.set[name]; return ok }

// Unmodelled lists the flags given that the test engine accepts and does
// not act on, for one honest log line at start.
func (v Values) Unmodelled() []string {
	var out []string
	for name := range v.set {
		if f, ok := v.table[name]; ok && !f.modelled {
			out = append(out, "--"+name)
		}
	}
	sort.Strings(out)
	return out
}

// parseFlags parses a command's arguments as urfave/cli does for k3s:
// -flag or --flag, value after "=" or as the next argument, booleans
// alone or with =true/false, lists repeated. An undefined flag is an error.
// Environment variables fill flags the arguments left unset.
func parseFlags(fl flavor.Flavor, table map[string]flag, args []string) (Values, error) {
	byName := map[string]flag{}
	for _, f := range table {
		byName[f.name] = f
		if f.alias != "" {
			byName[f.alias] = f
		}
	}
	v := Values{set: map[string][]string{}, table: table}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return v, fmt.Errorf("unexpected argument %q", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, ok := byName[name]
		if !ok {
			return v, fmt.Errorf("flag provided but not defined: -%s", name)
		}
		switch {
		case f.kind == kindBool && !hasValue:
			value = "true"
		case f.kind == kindBool:
			if value != "true" && value != "false" {
				return v, fmt.Errorf("invalid boolean value %q for -%s", value, name)
			}
		case !hasValue:
			if i+1 >= len(args) {
				return v, fmt.Errorf("flag needs an argument: -%s", name)
			}
			i++
			value = args[i]
		}
		if f.kind == kindSlice {
			v.set[f.name] = append(v.set[f.name], value)
		} else {
			v.set[f.name] = []string{value}
		}
	}
	for _, f := range table {
		if f.env == "" || v.IsSet(f.name) {
			continue
		}
		if e := os.Getenv(fl.Env(f.env)); e != "" {
			if f.kind == kindSlice {
				v.set[f.name] = strings.Split(e, ",")
			} else {
				v.set[f.name] = []string{e}
			}
		}
	}
	return v, nil
}
