package pkgfile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// demoManifest is the manifest.yaml of a freshly built demo package.
func demoManifest(t testing.TB) []byte {
	t.Helper()
	es := readPackageEntries(t, mustCreate(t, createOpts(t, demoDir)).Path)
	return es[indexOf(t, es, ManifestName)].data
}

// rehash replaces the digest line so only the edit under test is wrong.
func rehash(t testing.TB, data []byte) []byte {
	t.Helper()
	i := bytes.LastIndex(data, []byte(manifestDigestPrefix))
	require.Positive(t, i)
	body := data[:i]
	return append(bytes.Clone(body), []byte(manifestDigestPrefix+sha256Hex(body)+"\n")...)
}

func TestParseManifestRoundTrip(t *testing.T) {
	data := demoManifest(t)
	m, err := ParseManifest(data)
	require.NoError(t, err)
	again, err := MarshalManifest(m)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again), "parse then render gives the same bytes")
}

func TestParseManifestRefuses(t *testing.T) {
	data := demoManifest(t)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"no digest line", bytes.Replace(data, []byte(manifestDigestPrefix), []byte("# something: "), 1), "digest line"},
		{"an unknown key", rehash(t, bytes.Replace(data, []byte("package:\n"), []byte("surprise: 1\npackage:\n"), 1)), "surprise"},
		{"a newer layout", rehash(t, bytes.Replace(data, []byte("layout: 2"), []byte("layout: 9"), 1)), "newer than this cargoship reads"},
		{"no layout", rehash(t, bytes.Replace(data, []byte("  layout: 2\n"), nil, 1)), "package.layout is missing"},
		{"an invalid definition", rehash(t, bytes.Replace(data, []byte("type: k3s"), []byte("type: nope"), 1)), "spec.type"},
		{"no build architectures", rehash(t, bytes.Replace(data, []byte("build:\n  architectures:\n    - amd64\n    - arm64\n"), []byte("build:\n"), 1)), "build.architectures"},
		{"a kind that is not the entry's directory", rehash(t, bytes.Replace(data, []byte("name: os/0/demo-engine\n      kind: os"), []byte("name: os/0/demo-engine\n      kind: files"), 1)), "is not under files/"},
		{"an SBOM with a target", rehash(t, bytes.Replace(data, []byte("name: sbom/cargoship.cdx.json\n      kind: sbom\n      index: -1\n"), []byte("name: sbom/cargoship.cdx.json\n      kind: sbom\n      index: -1\n      target: /etc/x\n"), 1)), "must be empty: apply places no sbom entry"},
		{"an SBOM under another name", rehash(t, bytes.Replace(data, []byte("name: sbom/cargoship.cdx.json"), []byte("name: sbom/other.json"), 1)), "is not sbom/cargoship.cdx.json with index -1"},
		{"an escaping entry", rehash(t, bytes.Replace(data, []byte("name: os/0/demo-engine"), []byte("name: os/../../x"), 1)), "not a clean relative path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest(tc.data)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestModeText(t *testing.T) {
	var m Mode
	require.NoError(t, m.UnmarshalText([]byte("0o750")))
	assert.Equal(t, Mode(0o750), m)
	assert.Equal(t, "0750", m.String())
	assert.Error(t, m.UnmarshalText([]byte("0999")))
}

// craftManifest is the demo manifest with its parsed form changed by edit,
// rendered without the read-back check and with a valid digest line: what
// someone who rewrote an unsigned package could write.
func craftManifest(t testing.TB, edit func(*Manifest)) []byte {
	t.Helper()
	m, err := ParseManifest(demoManifest(t))
	require.NoError(t, err)
	edit(m)
	data, err := renderManifest(m)
	require.NoError(t, err)
	return data
}

// TestParseManifestRefusesWhatApplyMustNotPlace checks every index field
// apply acts on; each error names the manifest, the line and the field.
func TestParseManifestRefusesWhatApplyMustNotPlace(t *testing.T) {
	entry := func(name string, edit func(*Entry)) func(*Manifest) {
		return func(m *Manifest) {
			for i := range m.Package.Entries {
				if m.Package.Entries[i].Name == name {
					edit(&m.Package.Entries[i])
					return
				}
			}
			t.Fatalf("no entry %s", name)
		}
	}
	const motd, engine = "files/0/cargoship-demo", "os/0/demo-engine"
	cases := []struct {
		name string
		edit func(*Manifest)
		want string // a regular expression
	}{
		{"a relative target", entry(motd, func(e *Entry) { e.Target = "etc/shadow" }), `entries\[0\]\.target: "etc/shadow" must be an absolute path`},
		{"a target that climbs", entry(motd, func(e *Entry) { e.Target = "/var/../../etc/shadow" }), `entries\[0\]\.target: "/var/../../etc/shadow" must be an absolute path without '\.\.'`},
		{"a target not clean", entry(motd, func(e *Entry) { e.Target = "/etc//shadow" }), `entries\[0\]\.target: "/etc//shadow" is not a clean path; write /etc/shadow`},
		{"a target with shell characters", entry(motd, func(e *Entry) { e.Target = "/etc/x;reboot" }), `entries\[0\]\.target: "/etc/x;reboot" must be`},
		{"no target", entry(motd, func(e *Entry) { e.Target = "" }), `entries\[0\]\.target: is required`},
		{"a relative symlink", entry(engine, func(e *Entry) { e.Symlinks = []string{"/usr/bin/ok", "bin/x"} }), `entries\[\d+\]\.symlinks\[1\]: "bin/x" must be an absolute path`},
		{"a symlink that climbs", entry(engine, func(e *Entry) { e.Symlinks = []string{"/usr/../../etc/cron.d/x"} }), `entries\[\d+\]\.symlinks\[0\]: "/usr/../../etc/cron.d/x"`},
		{"a setuid mode", entry(engine, func(e *Entry) { e.Mode = 0o4755 }), `entries\[\d+\]\.mode: 4755 sets the setuid, setgid or sticky bit`},
		{"a user that is not a name", entry(motd, func(e *Entry) { e.User = "root;reboot" }), `entries\[0\]\.user: "root;reboot" is not a user or group name`},
		{"a group that is not a name", entry(motd, func(e *Entry) { e.Group = "a b" }), `entries\[0\]\.group: "a b" is not a user or group name`},
		{"a name outside the package", entry(motd, func(e *Entry) { e.Name = "files/0/../../x" }), `entries\[0\]\.name: entry name "files/0/\.\./\.\./x" is not a clean relative path`},
		{"a name not its item's", entry(motd, func(e *Entry) { e.Name = "files/1/cargoship-demo" }), `entries\[0\]\.name: files/1/cargoship-demo is not files/0/<file>`},
		{"an item the definition has not", entry(motd, func(e *Entry) { e.Name, e.Index = "files/7/cargoship-demo", 7 }), `entries\[0\]\.name: files/7/cargoship-demo names item 7 of the definition's files list, which has 2`},
		{"a root entry's name", entry(motd, func(e *Entry) { e.Name = ChecksumsName }), `entries\[0\]\.name: checksums\.txt is not under files/`},
		{"a name listed twice", entry(engine, func(e *Entry) { e.Name, e.Kind, e.Index = motd, KindFiles, 0 }), `entries\[\d+\]\.name: files/0/cargoship-demo is listed twice`},
		{"a digest that is not one", entry(motd, func(e *Entry) { e.SHA256 = "ZZ" }), `entries\[0\]\.sha256: "ZZ" is not a sha256`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest(craftManifest(t, tc.edit))
			require.Error(t, err)
			assert.Regexp(t, `^manifest\.yaml:\d+:\d+: package\.`+tc.want, err.Error())
		})
	}
}

// TestParseManifestIsOneGuardedDocument feeds manifests that are valid
// YAML the document loader refuses: each is refused the same way, fast.
func TestParseManifestIsOneGuardedDocument(t *testing.T) {
	data := demoManifest(t)
	digest := []byte(manifestDigestPrefix)
	laughs := "    engine:\n      config:\n        l0: &l0 [ha, ha, ha, ha, ha, ha, ha, ha, ha, ha]\n"
	for i := 1; i < 9; i++ {
		laughs += fmt.Sprintf("        l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	var keys strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&keys, "        k%d: v\n", i)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"a second document", rehash(t, bytes.Replace(data, digest, []byte("---\npackage: {layout: 1}\n"+manifestDigestPrefix), 1)),
			`^manifest\.yaml:\d+:1: holds 2 YAML documents`},
		{"an alias bomb", rehash(t, bytes.Replace(data, []byte("    engine:\n      config:\n"), []byte(laughs), 1)),
			`^manifest\.yaml:\d+:\d+: holds an alias \(\*name\); this document is written without them`},
		{"a mapping of 3000 keys", rehash(t, bytes.Replace(data, []byte("    engine:\n      config:\n"), []byte("    engine:\n      config:\n"+keys.String()), 1)),
			`^manifest\.yaml:\d+:9: the mapping that starts here holds more than 2000 keys`},
		{"a manifest over the limit", rehash(t, append(bytes.Repeat([]byte("# padding\n"), maxManifestSize/10+1), data...)),
			`^manifest\.yaml is \d+ bytes, more than the 4194304 it may be`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := ParseManifest(tc.data)
			require.Error(t, err)
			assert.Regexp(t, tc.want, err.Error())
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

func TestMarshalManifestRefusesWhatOpenWould(t *testing.T) {
	m, err := ParseManifest(demoManifest(t))
	require.NoError(t, err)
	m.Package.Entries[0].Target = "/etc/../etc/shadow"
	_, err = MarshalManifest(m)
	require.Error(t, err)
	assert.Regexp(t, `^render manifest\.yaml: it would not read back: manifest\.yaml:\d+:\d+: package\.entries\[0\]\.target`, err.Error())
}
