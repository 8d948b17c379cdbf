package v1alpha1

import "testing"

func TestCheckHostPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"/etc/motd": true, "/usr/local/bin/k3s": true,
		"": false, "etc/motd": false, "/": false, "/etc/../shadow": false, "/etc//motd": false,
		"/etc/motd/": false, "/etc/./motd": false, "/etc/x;reboot": false, "/etc/\nx": false,
	} {
		if err := CheckHostPath(p); (err == nil) != ok {
			t.Errorf("CheckHostPath(%q) = %v, want ok %v", p, err, ok)
		}
	}
}

func TestCheckOwnerName(t *testing.T) {
	for n, ok := range map[string]bool{
		"root": true, "adm": true, "_apt": true, "svc-1": true, "1000": true,
		"": false, "Root": false, "a b": false, "root;reboot": false, "-x": false,
	} {
		if err := CheckOwnerName(n); (err == nil) != ok {
			t.Errorf("CheckOwnerName(%q) = %v, want ok %v", n, err, ok)
		}
	}
}
