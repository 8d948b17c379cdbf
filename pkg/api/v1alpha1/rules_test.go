package v1alpha1

import (
	"strings"
	"testing"
)

func TestCheckRegistryName(t *testing.T) {
	for _, ok := range []string{"docker.io", "registry.example.com:5000", "10.0.0.5:5000", "10.0.0.5", "[fd00::1]:5000", "[fd00::1]", "*", "_default", "localhost"} {
		if err := CheckRegistryName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "../../../../etc/cron.d", "..", "a/b", "bad host", "r;reboot", "r:0", "r:99999", "r:+80", "fd00::1", "[fd00::1%eth0]:5000", "[10.0.0.1]:5000", "r.example.com/x", "$(id)", "_other"} {
		if err := CheckRegistryName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckRegistryEndpoint(t *testing.T) {
	for _, ok := range []string{"https://mirror.example.com", "mirror.example.com:5000", "http://10.0.0.5:5000/v2/prefix"} {
		if err := CheckRegistryEndpoint(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://../../etc", "ftp://mirror.example.com", "https://mirror.example.com:0", "https://a b", "https://m\n.example.com"} {
		if err := CheckRegistryEndpoint(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckFileNamePart(t *testing.T) {
	for _, ok := range []string{"1.35.3-k3s1", "v1.35.4+rke2r1", "k3s_lab", "2026.04"} {
		if err := CheckFileNamePart(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "../../../var/x", ".hidden", "-rf", "a/b", `a\b`, "a b", "..", strings.Repeat("x", 101)} {
		if err := CheckFileNamePart(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseHostKey(t *testing.T) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPA6gmCq3myOTzCwEzGyyYf/aSeU6S+NXmeZj8JoYTte"
	fp, k, err := ParseHostKey(" " + key + " comment\n")
	if err != nil || k == nil || !strings.HasPrefix(fp, "SHA256:") {
		t.Fatalf("a key line: %q, %v, %v", fp, k, err)
	}
	if got, k, err := ParseHostKey(fp); err != nil || k != nil || got != fp {
		t.Errorf("its fingerprint: %q, %v, %v", got, k, err)
	}
	for _, bad := range []string{"ssh-ed25519 AAAA...", "SHA256:tooshort", "SHA256:" + strings.Repeat("A", 44), key + "\n" + key, "md5:aa:bb"} {
		if _, _, err := ParseHostKey(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckSource(t *testing.T) {
	for _, ok := range []string{"./k3s", "/srv/k3s", "https://example.com/k3s", "HTTP://example.com/x", "file:///srv/k3s"} {
		if err := CheckSource(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"ftp://example.com/k3s", "https:///x", "s3://bucket/x", " ", "https://user:secret@exa mple.com/x"} {
		err := CheckSource(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the message repeats the credentials: %v", bad, err)
		}
	}
}

func TestCheckEnvironmentValue(t *testing.T) {
	for _, ok := range []string{"plain", "it's", "$HOME", `"quoted"`, "a\tb", ""} {
		if err := CheckEnvironmentValue(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"it's $x", `it's "x"`, "it's `id`", `it's \n`, "a\nb", "a\rb", "a\x00b", "a\x07b"} {
		if err := CheckEnvironmentValue(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFileModeRefusesSpecialBits(t *testing.T) {
	for _, bad := range []FileMode{"7777", "4755", "02755", "0o1777"} {
		if _, err := bad.Mode(0o644); err == nil || !strings.Contains(err.Error(), "setuid, setgid or sticky") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if m, err := FileMode("0755").Mode(0o644); err != nil || m != 0o755 {
		t.Errorf("0755: %o, %v", m, err)
	}
}
