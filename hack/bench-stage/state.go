package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// hostState is what a stage walk leaves on one host, keyed by item (a
// path, "hosts block", "sysctl <key>", "nft table"), with the fleet's
// addresses replaced by host names so two fleets on two subnets compare.
type hostState map[string]string

// stateScript prints every file the walk may write (mode, size, sha256,
// and the text of small ones), the managed /etc/hosts block, the live
// sysctls, the loaded nft table and the boot unit's state.
const stateScript = `set -u
for f in $(find /etc/cargoship /etc/cargoship-bench /etc/rancher /var/lib/rancher /usr/local/bin \
    /etc/sysctl.d/zzz-cargoship.conf /etc/modules-load.d/cargoship.conf \
    /etc/systemd/system/k3s.service /etc/systemd/system/k3s-agent.service \
    /etc/systemd/system/cargoship-nftables.service /run/cargoship/cargoship.lock -type f 2>/dev/null | sort); do
  echo "@@file $f $(stat -c %a "$f") $(stat -c %s "$f") $(sha256sum < "$f" | cut -d' ' -f1)"
  case "$f" in */token|*.cargoship-staged|*/images/*) ;; *) [ "$(stat -c %s "$f")" -lt 16384 ] && cat "$f" ;; esac
done
echo "@@hosts block"
sed -n '/^# BEGIN cargoship managed/,/^# END cargoship managed/p' /etc/hosts
for k in "$@"; do echo "@@sysctl $k"; sysctl -n "$k"; done
echo "@@nft table"
nft list table inet cargoship 2>&1
echo "@@nft unit"
systemctl is-enabled cargoship-nftables.service 2>&1; systemctl is-active cargoship-nftables.service 2>&1
`

// readState reads every host's end state.
func readState(ctx context.Context, f *fleet.Fleet) (map[string]hostState, error) {
	keys := make([]string, 0, len(sysctls))
	for k := range sysctls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cmd := "sh -c " + quote(stateScript) + " sh " + strings.Join(keys, " ")
	out := map[string]hostState{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(f.Hosts))
	for i, h := range f.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stdout, stderr, err := f.Run(ctx, h.Name, "root", cmd)
			if err != nil {
				errs[i] = fmt.Errorf("reading %s's state: %w: %s", h.Name, err, stderr)
				return
			}
			st := parseState(normalize(stdout, f))
			mu.Lock()
			out[h.Name] = st
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseState splits the script's output at its @@ headers.
func parseState(s string) hostState {
	st := hostState{}
	var key string
	var body strings.Builder
	var meta string // a file's "mode M size S sha256 H"
	flush := func() {
		switch {
		case key == "":
		case meta != "" && body.Len() > 0:
			// A text file: its bytes hold the fleet's addresses, so its
			// size and digest differ between fleets; compare the
			// normalised text instead.
			st[key] = strings.Join(strings.Fields(meta)[:2], " ") + "\n" + body.String()
		case meta != "":
			st[key] = meta + "\n"
		default:
			st[key] = body.String()
		}
		body.Reset()
		meta = ""
	}
	for _, line := range strings.SplitAfter(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "@@"); ok {
			flush()
			key = strings.TrimSpace(rest)
			if f := strings.Fields(key); len(f) == 5 && f[0] == "file" {
				// "file PATH MODE SIZE SHA": the key is the path, the
				// metadata goes first in the value.
				key = "file " + f[1]
				meta = "mode " + f[2] + " size " + f[3] + " sha256 " + f[4]
			}
			continue
		}
		body.WriteString(line)
	}
	flush()
	return st
}

// normalize replaces the fleet's addresses with its host names, the
// gateway last (it is a prefix of no host address, but match whole
// addresses anyway).
func normalize(s string, f *fleet.Fleet) string {
	names := map[string]string{f.Gateway: "GATEWAY"}
	for _, h := range f.Hosts {
		names[h.Address] = "<" + h.Name + ">"
	}
	re := regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`)
	return re.ReplaceAllStringFunc(s, func(a string) string {
		if n, ok := names[a]; ok {
			return n
		}
		return a
	})
}

// compareStates lists what differs between the two tools' end states.
// The random token compares by mode; the sysctl file and the engine config
// by their settings (see semantic); everything else byte for byte, after
// the fleets' addresses are replaced by host names.
func compareStates(a, b map[string]hostState) []string {
	var out []string
	for _, h := range sortedKeys(a) {
		sa, sb := a[h], b[h]
		if sb == nil {
			out = append(out, h+": only in cargoship's fleet")
			continue
		}
		for _, k := range union(sortedKeys(sa), sortedKeys(sb)) {
			va, vb := sa[k], sb[k]
			switch {
			case looseFile(k):
				va, vb = firstField(va, "mode"), firstField(vb, "mode")
			case strings.HasSuffix(k, ".conf") || strings.HasSuffix(k, ".yaml"):
				va, vb = semantic(va), semantic(vb)
			}
			if va != vb {
				out = append(out, fmt.Sprintf("%s %s:\n    cargoship: %q\n    ansible:   %q", h, k, va, vb))
			}
		}
	}
	return out
}

// semantic is a text file's mode and its settings, one "key=value" line
// each, sorted: Ansible's sysctl module writes "k=v" where cargoship
// writes "k = v", and to_nice_yaml quotes and indents differently from
// cargoship's YAML. Both say the same; that is what is compared.
func semantic(v string) string {
	meta, body, _ := strings.Cut(v, "\n")
	var kv []string
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(body), &doc); err == nil && len(doc) > 0 && !strings.Contains(body, " = ") {
		for k, x := range doc {
			kv = append(kv, fmt.Sprintf("%s=%v", k, x))
		}
	} else {
		for _, line := range strings.Split(body, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, x, _ := strings.Cut(line, "=")
			kv = append(kv, strings.TrimSpace(k)+"="+strings.TrimSpace(x))
		}
	}
	sort.Strings(kv)
	return firstField(meta, "mode") + "\n" + strings.Join(kv, "\n")
}

// looseFile says which files compare by mode only.
func looseFile(key string) bool {
	for _, suffix := range []string{"/token", "/cargoship.lock"} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// firstField is "mode NNNN" from a file's value, or "absent".
func firstField(v, name string) string {
	f := strings.Fields(v)
	if len(f) >= 2 && f[0] == name {
		return f[0] + " " + f[1]
	}
	return "absent"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(a, b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// quote single-quotes s for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// dumpState writes each host's normalised end state to dir/TOOL-HOST.txt,
// so a difference can be read in full (kept with -keep).
func dumpState(dir, tool string, st map[string]hostState) error {
	for h, s := range st {
		var b strings.Builder
		for _, k := range sortedKeys(s) {
			fmt.Fprintf(&b, "@@%s\n%s", k, s[k])
		}
		if err := os.WriteFile(filepath.Join(dir, tool+"-"+h+".txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
