package fleet

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// defaultMirror is used only when the host's apt configuration names none.
const defaultMirror = "http://deb.debian.org/debian"

// debianMirror returns the Debian mirror this machine's apt already uses, so
// the rootfs build goes wherever the machine is allowed to go (a proxy, a
// snapshot, an internal mirror) rather than to a hard-coded internet host.
// CARGOSHIP_FLEET_MIRROR overrides it.
func debianMirror() string {
	if m := os.Getenv("CARGOSHIP_FLEET_MIRROR"); m != "" {
		return m
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			if m := mirrorFromDeb822(string(b)); m != "" {
				return m
			}
		}
	}
	lists, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	for _, f := range append([]string{"/etc/apt/sources.list"}, lists...) {
		if b, err := os.ReadFile(f); err == nil {
			if m := mirrorFromOneLine(string(b)); m != "" {
				return m
			}
		}
	}
	return defaultMirror
}

// mirrorFromDeb822 picks the URI of the first "deb" stanza that serves a main
// suite (one without a "-security"/"-updates" suffix): the security archive
// does not carry the full distribution debootstrap needs.
func mirrorFromDeb822(text string) string {
	for _, stanza := range strings.Split(text, "\n\n") {
		fields := map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(stanza))
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			fields[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
		if fields["enabled"] == "no" || !hasWord(fields["types"], "deb") {
			continue
		}
		mainSuite := false
		for _, s := range strings.Fields(fields["suites"]) {
			if !strings.Contains(s, "-") {
				mainSuite = true
			}
		}
		uris := strings.Fields(fields["uris"])
		if mainSuite && len(uris) > 0 {
			return strings.TrimSuffix(uris[0], "/")
		}
	}
	return ""
}

// mirrorFromOneLine reads the classic `deb [opts] URI suite comps` format.
func mirrorFromOneLine(text string) string {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		i := 1
		if strings.HasPrefix(f[i], "[") {
			for i < len(f) && !strings.HasSuffix(f[i], "]") {
				i++
			}
			i++
		}
		if i+1 < len(f) && !strings.Contains(f[i+1], "-") {
			return strings.TrimSuffix(f[i], "/")
		}
	}
	return ""
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}
