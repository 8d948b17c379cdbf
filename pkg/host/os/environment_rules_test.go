package hostos

import "testing"

// TestEnvironmentLineRefusesWhatValidationRefuses: /etc/environment takes
// what validate accepts and nothing else; a control character other than a
// line break used to be written as it was (issue 11: 10).
func TestEnvironmentLineRefusesWhatValidationRefuses(t *testing.T) {
	for _, bad := range []string{"a\x07b", "a\x1bb", `it's "x"`} {
		if _, err := EnvironmentLine("V", bad); err == nil {
			t.Errorf("%q written", bad)
		}
	}
}
