package release

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The release tool is a Go binary with modules linked in (pkgfile's
// among them; a test binary records none): its SBOM must list each with its
// version and go.sum hash.
func TestSBOMOfListsEveryModule(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "tool")
	out, err := exec.Command(goTool(t), "build", "-o", exe, "./tool").CombinedOutput()
	require.NoError(t, err, "%s", out)
	bi, err := buildinfo.ReadFile(exe)
	require.NoError(t, err)
	require.NotEmpty(t, bi.Deps, "the tool links modules")

	var buf bytes.Buffer
	require.NoError(t, WriteSBOM(&buf, exe, "v1.2.3"))
	var bom BOM
	require.NoError(t, json.Unmarshal(buf.Bytes(), &bom))

	assert.Equal(t, "CycloneDX", bom.BOMFormat)
	assert.Equal(t, "1.5", bom.SpecVersion)
	assert.Regexp(t, `^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, bom.SerialNumber)
	digest, err := fileSHA256(exe)
	require.NoError(t, err)
	assert.Equal(t, []Hash{{"SHA-256", digest}}, bom.Metadata.Component.Hashes)
	assert.Equal(t, "v1.2.3", bom.Metadata.Component.Version)

	byName := map[string]Component{}
	refs := map[string]bool{}
	for _, c := range bom.Components {
		byName[c.Name] = c
		assert.False(t, refs[c.BOMRef], "bom-ref %s twice", c.BOMRef)
		refs[c.BOMRef] = true
	}
	assert.Equal(t, bi.GoVersion, byName["std"].Version)
	hexSHA256 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		c, ok := byName[m.Path]
		if !assert.True(t, ok, "module %s missing", m.Path) {
			continue
		}
		assert.Equal(t, m.Version, c.Version, m.Path)
		assert.Equal(t, "pkg:golang/"+m.Path+"@"+m.Version+"?type=module", c.PURL)
		if m.Sum != "" {
			require.Len(t, c.Hashes, 1, m.Path)
			assert.Regexp(t, hexSHA256, c.Hashes[0].Content, m.Path)
		}
	}
	require.Len(t, bom.Dependencies, 1)
	assert.Len(t, bom.Dependencies[0].DependsOn, len(bi.Deps)+1)
	assert.Equal(t, bom.Metadata.Component.BOMRef, bom.Dependencies[0].Ref)
}

// A known version 5 UUID: Python's uuid.uuid5(uuid.NAMESPACE_OID, "sha256:" + "0"*64).
const wantSerial = "3a38e0a7-7077-529e-a883-0632fd958274"

func TestSerialNumber(t *testing.T) {
	assert.Equal(t, "urn:uuid:"+wantSerial, serialNumber(strings.Repeat("0", 64)))
}

func TestH1Hex(t *testing.T) {
	// golang.org/x/sync v0.25.0's go.sum line would do as well; any
	// 32 bytes in base64 make an h1 hash.
	got, err := h1Hex("h1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	require.NoError(t, err)
	assert.Equal(t, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", got)
	for _, bad := range []string{"h2:AAEC", "h1:not base64!", "h1:AAEC"} {
		_, err := h1Hex(bad)
		assert.Error(t, err, bad)
	}
}

func TestSBOMOfNotGo(t *testing.T) {
	p := t.TempDir() + "/not-go"
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	_, err := SBOMOf(p, "v1")
	require.Error(t, err)
}

// goTool is the go command that runs this test: go test puts its own
// GOROOT/bin first on PATH.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	return p
}
