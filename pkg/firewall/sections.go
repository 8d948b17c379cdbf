package firewall

import "strings"

// section is one part of a probe script's output: a line "@@name arg"
// and the lines up to the next such line. The firewalld readers print
// their answers this way so one round trip carries many questions.
type section struct {
	name, arg string
	lines     []string
}

// splitSections cuts probe output into its sections, in order. Lines
// before the first header belong to no section and are dropped.
func splitSections(out string) []section {
	var secs []section
	for _, line := range strings.Split(out, "\n") {
		if header, ok := strings.CutPrefix(line, "@@"); ok {
			name, arg, _ := strings.Cut(header, " ")
			secs = append(secs, section{name: name, arg: arg})
			continue
		}
		if len(secs) > 0 {
			secs[len(secs)-1].lines = append(secs[len(secs)-1].lines, line)
		}
	}
	return secs
}

// words is every whitespace-separated word of the section.
func (s section) words() []string {
	var w []string
	for _, l := range s.lines {
		w = append(w, strings.Fields(l)...)
	}
	return w
}

// nonEmpty is every line of the section that holds more than blanks,
// trimmed: a rich rule is one line with spaces in it.
func (s section) nonEmpty() []string {
	var out []string
	for _, l := range s.lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func addAll(set map[string]bool, words []string) {
	for _, w := range words {
		set[w] = true
	}
}
