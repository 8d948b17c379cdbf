package engine

import "testing"

func TestServerOf(t *testing.T) {
	for in, want := range map[string]string{
		"node-name: kw0\nserver: https://10.0.0.1:6443\n":  "10.0.0.1",
		"server: \"https://vip.example.com:9345\"\n":       "vip.example.com",
		"server: https://[fd00::1]:6443\ntoken-file: /x\n": "fd00::1",
		"cluster-init: true\n":                             "",
		"server: http://10.0.0.1:6443\n":                   "",
	} {
		if got := ServerOf([]byte(in)); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
