package hosttest

import "strings"

// Words splits a command line the way a POSIX shell splits words made of
// bare text, 'single-quoted' and "double-quoted" parts (shell.Join's
// output), so a fake can look at the arguments a command really gets.
// It does not expand anything.
func Words(cmd string) []string {
	var words []string
	var b strings.Builder
	in := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch c {
		case '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				j = len(cmd) - i - 1
			}
			b.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
			in = true
		case '"':
			for i++; i < len(cmd) && cmd[i] != '"'; i++ {
				if cmd[i] == '\\' && i+1 < len(cmd) {
					i++
				}
				b.WriteByte(cmd[i])
			}
			in = true
		case ' ', '\t', '\n':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}
