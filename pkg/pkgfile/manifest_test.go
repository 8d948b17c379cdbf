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
		{"a newer layout", rehash(t, bytes.Replace(data, []byte("layout: 1"), []byte("layout: 9"), 1)), "newer than this cargoship reads"},
		{"no layout", rehash(t, bytes.Replace(data, []byte("  layout: 1\n"), nil, 1)), "package.layout is missing"},
		{"an invalid definition", rehash(t, bytes.Replace(data, []byte("type: k3s"), []byte("type: nope"), 1)), "spec.type"},
		{"no build architectures", rehash(t, bytes.Replace(data, []byte("build:\n  architectures:\n    - amd64\n    - arm64\n"), []byte("build:\n"), 1)), "build.architectures"},
		{"a kind that is not the entry's directory", rehash(t, bytes.Replace(data, []byte("name: os/0/demo-engine\n      kind: os"), []byte("name: os/0/demo-engine\n      kind: files"), 1)), "is not under files/"},
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
