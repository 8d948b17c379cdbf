package firewall

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// fakeUFW models ufw 0.36 for the rules cargoship writes: it parses the
// rule grammar, treats rules equal but for action or comment as the same
// rule (ufw's UFWRule.match), and prints `show added` with the spelling of
// ufw's UFWCommandRule.get_command (short form when only a port is given,
// "proto" after the addresses).
type fakeUFW struct {
	Active bool
	Rules  []fakeUFWRule
}

type fakeUFWRule struct {
	Action, Proto, Src, DPort, Comment string
}

func (r fakeUFWRule) same(o fakeUFWRule) bool {
	return r.Proto == o.Proto && r.Src == o.Src && r.DPort == o.DPort
}

func (r fakeUFWRule) command() string {
	res := r.Action
	if r.Src == "any" && r.DPort != "any" {
		res += " " + r.DPort
		if r.Proto != "any" {
			res += "/" + r.Proto
		}
	} else {
		if r.Src != "any" {
			res += " from " + r.Src
		}
		if r.DPort != "any" {
			res += " to any port " + r.DPort
		}
		if !strings.Contains(res, " to ") && !strings.Contains(res, " from ") {
			res += " to any"
		}
		if r.Proto != "any" {
			res += " proto " + r.Proto
		}
	}
	if r.Comment != "" {
		res += " comment '" + r.Comment + "'"
	}
	return res
}

func (u *fakeUFW) run(args []string) int {
	if len(args) == 0 {
		return fail(1, "ERROR: not enough args")
	}
	switch strings.Join(args, " ") {
	case "status":
		if !u.Active {
			fmt.Println("Status: inactive")
			return 0
		}
		fmt.Println("Status: active")
		fmt.Println()
		fmt.Println("To                         Action      From")
		fmt.Println("--                         ------      ----")
		return 0
	case "show added":
		fmt.Println("Added user rules (see 'ufw status' for running firewall):")
		if len(u.Rules) == 0 {
			fmt.Println("(None)")
		}
		for _, r := range u.Rules {
			fmt.Println("ufw " + r.command())
		}
		return 0
	case "enable", "--force enable":
		return fail(1, "fake ufw: cargoship must never enable ufw")
	}
	mode := "add"
	switch args[0] {
	case "delete", "prepend":
		mode, args = args[0], args[1:]
	}
	r := fakeUFWRule{Action: args[0], Proto: "any", Src: "any", DPort: "any"}
	if i := slices.Index(args, "comment"); i >= 0 {
		if i+1 >= len(args) || strings.Contains(args[i+1], "'") {
			return fail(1, "ERROR: bad comment")
		}
		r.Comment, args = args[i+1], args[:i]
	}
	if len(args) == 2 {
		port, proto, found := strings.Cut(args[1], "/")
		if strings.Contains(port, ":") && !found {
			return fail(1, "ERROR: Must specify 'tcp' or 'udp' with multiple ports")
		}
		r.DPort = port
		if found {
			r.Proto = proto
		}
	} else {
		for i := 1; i+1 < len(args); i += 2 {
			switch args[i] {
			case "proto":
				r.Proto = args[i+1]
			case "from":
				r.Src = args[i+1]
			case "to":
				if args[i+1] != "any" {
					return fail(1, "fake ufw: only 'to any'")
				}
			case "port":
				r.DPort = args[i+1]
			default:
				return fail(1, "ERROR: Invalid token '%s'", args[i])
			}
		}
		if (len(args)+1)%2 != 0 { // ufw's own check: ACTION and key/value pairs
			return fail(1, "ERROR: Wrong number of arguments")
		}
	}
	for i, have := range u.Rules {
		if !have.same(r) {
			continue
		}
		switch {
		case mode == "delete":
			u.Rules = slices.Delete(u.Rules, i, i+1)
			fmt.Println("Rule deleted")
		case have == r:
			fmt.Println("Skipping adding existing rule")
		default:
			u.Rules[i] = r
			fmt.Println("Rule updated")
		}
		return 0
	}
	switch mode {
	case "delete":
		fmt.Fprintln(os.Stderr, "Could not delete non-existent rule")
	case "prepend":
		if len(u.Rules) == 0 {
			return fail(1, "ERROR: Invalid position '1'")
		}
		u.Rules = append([]fakeUFWRule{r}, u.Rules...)
		fmt.Println("Rule inserted")
	default:
		u.Rules = append(u.Rules, r)
		fmt.Println("Rule added")
	}
	return 0
}
