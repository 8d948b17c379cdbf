//go:build linux

package pkgfile

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/internal/costtest"
)

// Each crafted package below is opened (verify-only, as inspect does) in a
// child process, this test binary run again, so its time and peak memory
// are its own and an open that would run for minutes is killed at the
// bound. The bound is the one inspect promises: 5 s and 256 MiB.
const (
	openTime    = 5 * time.Second
	openMemory  = 256 << 20
	openCaseEnv = "CARGOSHIP_PKGFILE_OPEN_CASE"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(openCaseEnv); path != "" {
		p, err := Open(path, OpenOptions{VerifyOnly: true})
		if err != nil {
			fmt.Println(err)
		} else {
			fmt.Println("opened")
			_ = p.Close()
		}
		costtest.PrintPeakRSS()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestCraftedPackagesStayCheap(t *testing.T) {
	demo := mustCreate(t, createOpts(t, demoDir)).Path
	// withManifest is the demo with manifest.yaml edited and its digest
	// line, and the digest of checksums.txt in it, made to match again.
	withManifest := func(edit func([]byte) []byte) string {
		return tampered(t, demo, func(es []tarEntry) []tarEntry {
			i := indexOf(t, es, ManifestName)
			es[i].data = rehash(t, edit(es[i].data))
			return es
		})
	}
	engineConfig := []byte("    engine:\n      config:\n")
	laughs := "    engine:\n      config:\n        l0: &l0 [ha, ha, ha, ha, ha, ha, ha, ha, ha, ha]\n"
	for i := 1; i < 9; i++ {
		laughs += fmt.Sprintf("        l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	var list, keys bytes.Buffer
	list.Write(engineConfig)
	list.WriteString("        x:\n")
	for list.Len() < 60<<20 {
		list.WriteString("          - x\n")
	}
	keys.Write(engineConfig)
	keys.WriteString("        x:\n")
	for i := range 60_000 {
		fmt.Fprintf(&keys, "          k%d: v\n", i)
	}

	cases := []struct {
		name, pkg, want string // want: a regular expression, "opened" to open
	}{
		{"the demo", demo, `^opened$`},
		{"an alias bomb manifest", withManifest(func(b []byte) []byte { return bytes.Replace(b, engineConfig, []byte(laughs), 1) }),
			`manifest\.yaml:\d+:\d+: holds an alias \(\*name\)`},
		{"a 60 MiB manifest", withManifest(func(b []byte) []byte { return bytes.Replace(b, engineConfig, list.Bytes(), 1) }),
			`manifest\.yaml is \d+ bytes, more than the 4194304 it may be`},
		{"a manifest with a 60k-key mapping", withManifest(func(b []byte) []byte { return bytes.Replace(b, engineConfig, keys.Bytes(), 1) }),
			`manifest\.yaml:\d+:11: the mapping that starts here holds more than 2000 keys`},
		{"a 60 MiB checksums.txt", bigChecksums(t, demo), `checksums\.txt is \d+ bytes, more than the 4194304 it may be`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, took, rss := costtest.RunChild(t, openCaseEnv, c.pkg, openTime)
			re := regexp.MustCompile(c.want)
			if !re.MatchString(strings.TrimSpace(out)) {
				t.Errorf("want %s, got:\n%.2000s", c.want, out)
			}
			if rss > openMemory {
				t.Errorf("peak memory %d MiB, more than %d", rss>>20, openMemory>>20)
			}
			t.Logf("%v, %d MiB", took.Round(time.Millisecond), rss>>20)
		})
	}
}

// bigChecksums is the demo with 600k lines added to checksums.txt and the
// manifest recording its new digest: a list Open once read whole.
func bigChecksums(t *testing.T, demo string) string {
	t.Helper()
	return tampered(t, demo, func(es []tarEntry) []tarEntry {
		sums := indexOf(t, es, ChecksumsName)
		var b bytes.Buffer
		b.Write(es[sums].data)
		for i := 0; b.Len() < 60<<20; i++ {
			fmt.Fprintf(&b, "%064x  selinux/9/x%07d\n", i, i)
		}
		man := indexOf(t, es, ManifestName)
		old := []byte("checksums: " + sha256Hex(es[sums].data))
		es[man].data = rehash(t, bytes.Replace(es[man].data, old, []byte("checksums: "+sha256Hex(b.Bytes())), 1))
		es[sums].data = b.Bytes()
		return es
	})
}
