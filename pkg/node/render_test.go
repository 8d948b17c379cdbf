package node

import "testing"

func TestServerLine(t *testing.T) {
	for in, want := range map[string]string{
		"node-name: kw0\nserver: https://10.0.0.1:6443\n":  "10.0.0.1",
		"server: \"https://vip.example.com:9345\"\n":       "vip.example.com",
		"server: https://[fd00::1]:6443\ntoken-file: /x\n": "fd00::1",
		"cluster-init: true\n":                             "",
	} {
		got := ""
		if m := serverLine.FindStringSubmatch(in); m != nil {
			got = m[1]
			if got[0] == '[' {
				got = got[1 : len(got)-1]
			}
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
