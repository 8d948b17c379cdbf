package fleet

import "testing"

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"dev", "e2e", "a", "abcdefghijkl"} {
		if err := validateName(ok); err != nil {
			t.Errorf("validateName(%q) = %v, want ok", ok, err)
		}
	}
	// '-' would let "cs-dev-" match fleet "dev-x"'s hosts; too long would
	// overflow link names; upper case and leading digits are not hostnames.
	for _, bad := range []string{"", "dev-x", "Dev", "1dev", "abcdefghijklm", "dev.x", "dev_x"} {
		if err := validateName(bad); err == nil {
			t.Errorf("validateName(%q) = nil, want an error", bad)
		}
	}
}

func TestPlanHostsRejectsBadCounts(t *testing.T) {
	for _, s := range []Spec{
		{Name: "dev"},
		{Name: "dev", Control: -1, Worker: 2},
		{Name: "dev", Worker: 100},
		{Name: "dev", Control: 99, Worker: 99, Infra: 3},
	} {
		if _, err := planHosts(s, func(int) string { return "" }); err == nil {
			t.Errorf("planHosts(%+v) = nil error, want one", s)
		}
	}
}
