package v1alpha1

import "fmt"

// maxNesting bounds how deep a document may nest. Real documents nest
// about ten levels; the YAML parser takes time quadratic in the depth, so
// a few hundred kilobytes of "[[[[" or "- - - -" would otherwise hold a
// command for minutes before anything is reported, and its memory per
// token grows with the depth (200k tokens 480 deep: 250 MB, 200 deep: 150).
const maxNesting = 200

// checkNesting scans the raw bytes once, before parsing, for an upper bound
// of the nesting depth: indentation levels, compact "- - -" entries and
// unclosed flow brackets. It returns a finding at the line that goes past
// maxNesting, or nil. Brackets inside strings count too, which can only
// overestimate, and no real document comes near the limit.
func checkNesting(file string, data []byte) *Finding {
	return checkNestingLimit(file, data, maxNesting)
}

func checkNestingLimit(file string, data []byte, limit int) *Finding {
	var indents []int // the indentation of each open block level
	flow := 0
	line := 1
	for start := 0; start < len(data); line++ {
		end := start
		for end < len(data) && data[end] != '\n' {
			end++
		}
		text := data[start:end]
		start = end + 1

		col := 0
		for col < len(text) && text[col] == ' ' {
			col++
		}
		if col == len(text) || text[col] == '#' {
			continue
		}
		for len(indents) > 0 && indents[len(indents)-1] > col {
			indents = indents[:len(indents)-1]
		}
		if len(indents) == 0 || indents[len(indents)-1] < col {
			indents = append(indents, col)
		}
		dashes := 0
		for i := col; i+1 < len(text) && text[i] == '-' && text[i+1] == ' '; i += 2 {
			dashes++
		}
		for i := col; i < len(text); i++ {
			switch text[i] {
			case '[', '{':
				flow++
			case ']', '}':
				flow = max(flow-1, 0)
			}
			if depth := len(indents) + dashes + flow; depth > limit {
				return &Finding{Severity: SeverityError, File: file, Line: line, Column: i + 1,
					Message: fmt.Sprintf("nests more than %d levels deep", limit)}
			}
		}
		if depth := len(indents) + dashes + flow; depth > limit {
			return &Finding{Severity: SeverityError, File: file, Line: line, Column: col + 1,
				Message: fmt.Sprintf("nests more than %d levels deep", limit)}
		}
	}
	return nil
}
