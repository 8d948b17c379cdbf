package v1alpha1

import "fmt"

// checkTokenBound counts, over the raw bytes and before the lexer runs,
// every word and every YAML indicator character (- : , [ ] { } # & * ! | >
// quotes, ...): each token the lexer makes starts at one of them, so the
// count is an upper bound of the tokens up to a factor of two (an empty
// block scalar is two tokens for its one "|"). The lexer keeps a few
// hundred bytes per token and scans everything before it returns any, so
// this is the bound that keeps it cheap. Words inside strings and comments
// count too: it cannot tell them apart without lexing, and no real
// document comes near the limit. It returns a finding where the count
// passes limit, or nil.
func checkTokenBound(file string, data []byte, limit int) *Finding {
	n, line, lineStart := 0, 1, 0
	prev := byte('\n')
	for i, c := range data {
		if c == '\n' {
			line, lineStart = line+1, i+1
		}
		if !isYAMLSpace(c) && (isYAMLSpace(prev) || isIndicator(c) || isIndicator(prev)) {
			n++
			if n > limit {
				return &Finding{Severity: SeverityError, File: file, Line: line, Column: i - lineStart + 1,
					Message: fmt.Sprintf("holds more than %d YAML tokens (words and symbols such as - : [ ], in values and comments alike)", limit)}
			}
		}
		prev = c
	}
	return nil
}

func isYAMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isIndicator reports YAML's indicator characters, which may end one token
// and start another without a space between them.
func isIndicator(c byte) bool {
	switch c {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '<', '=':
		return true
	}
	return false
}
