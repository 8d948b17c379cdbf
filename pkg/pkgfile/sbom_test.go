package pkgfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cdxSerial is the serialNumber pattern of the CycloneDX 1.5 and 1.6 JSON
// schemas (UUID versions 1 to 5).
var cdxSerial = regexp.MustCompile(`^urn:uuid:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-5][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)

// cdxComponentTypes are the component types CycloneDX 1.5 allows.
var cdxComponentTypes = []string{
	"application", "framework", "library", "container", "platform", "operating-system", "device",
	"device-driver", "firmware", "file", "machine-learning-model", "data",
}

// checkCycloneDX holds a BOM, read as plain JSON (not through cargoship's
// types), to the CycloneDX 1.5 schema's requirements for what it holds:
// required fields present, enumerations and patterns kept, bom-refs unique
// and every dependency naming one. It returns the components by bom-ref.
func checkCycloneDX(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	var bom map[string]any
	require.NoError(t, json.Unmarshal(data, &bom))
	assert.Equal(t, "CycloneDX", bom["bomFormat"])
	assert.Contains(t, []any{"1.5", "1.6"}, bom["specVersion"])
	assert.Regexp(t, cdxSerial, bom["serialNumber"])
	assert.EqualValues(t, 1, bom["version"]) // a JSON number decodes as float64
	refs := map[string]map[string]any{}
	checkComponent := func(where string, c map[string]any) {
		assert.Contains(t, cdxComponentTypes, c["type"], where)
		assert.NotEmpty(t, c["name"], where)
		if ref, ok := c["bom-ref"].(string); ok {
			_, dup := refs[ref]
			assert.False(t, dup, "bom-ref %s is used twice", ref)
			refs[ref] = c
		}
		for _, h := range asList(c["hashes"]) {
			assert.Equal(t, "SHA-256", h["alg"], where)
			assert.Regexp(t, `^[a-f0-9]{64}$`, h["content"], where)
		}
		for _, x := range asList(c["externalReferences"]) {
			assert.NotEmpty(t, x["type"], where)
			assert.NotEmpty(t, x["url"], where)
		}
		for _, p := range asList(c["properties"]) {
			assert.NotEmpty(t, p["name"], where)
		}
		if purl, ok := c["purl"].(string); ok {
			assert.Regexp(t, `^pkg:[a-z]+/[^/?#@]+@[^?#]+(\?[^#]*)?$`, purl, where)
		}
	}
	md, _ := bom["metadata"].(map[string]any)
	require.NotNil(t, md, "metadata")
	for _, c := range asList(md["tools"].(map[string]any)["components"]) {
		checkComponent("metadata.tools", c)
	}
	checkComponent("metadata.component", md["component"].(map[string]any))
	comps := asList(bom["components"])
	for i, c := range comps {
		checkComponent(fmt.Sprintf("components[%d]", i), c)
	}
	for _, d := range asList(bom["dependencies"]) {
		require.Contains(t, refs, d["ref"], "a dependency names an unknown bom-ref")
		on, _ := d["dependsOn"].([]any)
		for _, on := range on {
			assert.Contains(t, refs, on, "dependency of %s", d["ref"])
		}
	}
	return refs
}

// asList is a JSON array of objects; an absent one is empty.
func asList(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out
}

// property is a component's property value, "" when it has none.
func property(c map[string]any, name string) string {
	for _, p := range asList(c["properties"]) {
		if p["name"] == name {
			return p["value"].(string)
		}
	}
	return ""
}

func TestCreateWritesAnSBOMOfEveryEntryAndImage(t *testing.T) {
	reg := newTestRegistry(t)
	refs := []string{reg.pushMultiArch(t, "demo/app:1.0"), reg.pushMultiArch(t, "demo/tool:2.0")}
	opts := createOpts(t, demoWithImages(t, "zstd", refs...))
	opts.InsecureRegistry = true
	res := mustCreate(t, opts)
	p, err := Open(res.Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer p.Close()

	// The SBOM is an entry like every other: in the index and checksums.txt,
	// so the manifest's digest (and a signature) covers it.
	e, ok := p.Entry(SBOMName)
	require.True(t, ok)
	assert.Equal(t, KindSBOM, e.Kind)
	assert.Empty(t, e.Target, "apply places no SBOM")
	assert.Equal(t, layoutSBOM, p.Manifest.Package.Layout)
	sums, err := ParseChecksums(p.checksumsBytes)
	require.NoError(t, err)
	data, err := p.SBOM()
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, hex.EncodeToString(sum[:]), sums[SBOMName])

	comps := checkCycloneDX(t, data)
	root := comps["package"]
	require.NotNil(t, root, "the package is the root component")
	assert.Equal(t, "demo", root["name"])
	assert.Equal(t, "0.1.0", root["version"])

	files := 0
	for _, e := range p.Entries() {
		if e.Kind == KindSBOM {
			assert.NotContains(t, comps, e.Name, "the SBOM does not list itself")
			continue
		}
		files++
		c := comps[e.Name]
		require.NotNil(t, c, "the SBOM lists %s", e.Name)
		assert.Equal(t, "file", c["type"])
		got := sha256.Sum256(readEntry(t, p, e.Name))
		assert.Equal(t, []any{map[string]any{"alg": "SHA-256", "content": hex.EncodeToString(got[:])}}, c["hashes"], e.Name)
		assert.Equal(t, "0.1.0", c["version"], e.Name)
		assert.Equal(t, e.Target, property(c, "cargoship:target"), e.Name)
		assert.Equal(t, e.Architecture, property(c, "cargoship:architecture"), e.Name)
		if e.Target != "" && !e.IsDirectory {
			assert.Equal(t, e.Target, c["name"], "a file is named by where it goes on a host")
		}
	}
	assert.Equal(t, 10, files, "the demo's 8 files (both architectures) and 2 image archives")

	for _, arch := range []string{"amd64", "arm64"} {
		archive, _, _ := p.ImageArchive(arch)
		for _, ref := range refs {
			c := comps[arch+"/"+ref]
			require.NotNil(t, c, "the SBOM lists %s for %s", ref, arch)
			digest := reg.digests[ref][arch]
			assert.Equal(t, "container", c["type"])
			assert.Equal(t, strings.TrimPrefix(digest, "sha256:"), asList(c["hashes"])[0]["content"])
			assert.Equal(t, arch, property(c, "cargoship:architecture"))
			assert.Equal(t, ref, property(c, "cargoship:reference"))
			assert.Equal(t, archive, property(c, "cargoship:archive"))
			// The refs are <host:port>/demo/<name>:<tag>.
			i := strings.LastIndex(ref, ":")
			repo, tag := ref[:i], ref[i+1:]
			assert.Equal(t, repo, c["name"])
			assert.Equal(t, tag, c["version"])
			name := repo[strings.LastIndex(repo, "/")+1:]
			assert.Equal(t, "pkg:oci/"+name+"@sha256%3A"+strings.TrimPrefix(digest, "sha256:")+"?arch="+arch+"&repository_url="+repo+"&tag="+tag, c["purl"])
		}
	}
}

func TestCreateSkipSBOMLeavesItOut(t *testing.T) {
	opts := createOpts(t, demoDir)
	opts.SkipSBOM = true
	p, err := Open(mustCreate(t, opts).Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer p.Close()
	_, ok := p.Entry(SBOMName)
	assert.False(t, ok)
	for _, e := range p.Entries() {
		assert.NotEqual(t, KindSBOM, e.Kind)
	}
	assert.NotContains(t, string(p.checksumsBytes), SBOMName)
	assert.Equal(t, layoutWithoutSBOM, p.Manifest.Package.Layout, "a cargoship that knows layout 1 opens it")
	_, err = p.SBOM()
	require.ErrorIs(t, err, ErrNoSBOM)
	require.ErrorContains(t, err, "skip_sbom")
}

// The serial number is derived from the content: equal BOMs, equal
// serials (a package stays reproducible); any difference, another serial.
func TestSBOMSerialFollowsContent(t *testing.T) {
	bom := func(sha string) SBOM {
		return SBOM{BOMFormat: "CycloneDX", SpecVersion: SBOMSpecVersion, Version: 1, Components: []SBOMComponent{
			{Type: "file", Name: "/x", Hashes: []SBOMHash{{Alg: "SHA-256", Content: sha}}},
		}}
	}
	serial := func(b SBOM) string {
		data, err := MarshalSBOM(b)
		require.NoError(t, err)
		var out SBOM
		require.NoError(t, json.Unmarshal(data, &out))
		require.Regexp(t, cdxSerial, out.SerialNumber)
		return out.SerialNumber
	}
	a, b := serial(bom(strings.Repeat("a", 64))), serial(bom(strings.Repeat("a", 64)))
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, serial(bom(strings.Repeat("b", 64))))
	withSerial := bom(strings.Repeat("a", 64))
	withSerial.SerialNumber = "urn:uuid:ignored"
	assert.Equal(t, a, serial(withSerial), "a serial already set does not feed the new one")
}

func TestPURLs(t *testing.T) {
	d := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct{ ref, want string }{
		{"docker.io/rancher/mirrored-pause:3.6", "pkg:oci/mirrored-pause@sha256%3A" + d[7:] + "?arch=amd64&repository_url=docker.io/rancher/mirrored-pause&tag=3.6"},
		{"127.0.0.1:5000/team/app:v1.2+b1", "pkg:oci/app@sha256%3A" + d[7:] + "?arch=amd64&repository_url=127.0.0.1:5000/team/app&tag=v1.2%2Bb1"},
		{"quay.io/x/y@" + d, "pkg:oci/y@sha256%3A" + d[7:] + "?arch=amd64&repository_url=quay.io/x/y"},
		{"quay.io/x/y:1@" + d, "pkg:oci/y@sha256%3A" + d[7:] + "?arch=amd64&repository_url=quay.io/x/y&tag=1"},
	} {
		assert.Equal(t, tc.want, ociPURL(tc.ref, d, "amd64"), tc.ref)
	}
	assert.Equal(t, "pkg:generic/k3s@v1.35.3%2Bk3s1?checksum=sha256:"+strings.Repeat("1", 64)+"&download_url=https://github.com/k3s-io/k3s/releases/download/v1.35.3%252Bk3s1/k3s",
		genericPURL("k3s", "v1.35.3+k3s1", "https://github.com/k3s-io/k3s/releases/download/v1.35.3%2Bk3s1/k3s", strings.Repeat("1", 64)))
	assert.True(t, slices.ContainsFunc([]string{"https://a.example/x"}, isDownloadURL))
	assert.False(t, isDownloadURL("files/motd"))
}

// A verify-only open (inspect) keeps the SBOM from its one pass, so
// inspect --sbom does not read the package again; an extracting open
// reads the extracted, verified copy. Both give the entry's bytes.
func TestSBOMIsKeptFromTheVerifyPass(t *testing.T) {
	res := mustCreate(t, createOpts(t, demoDir))
	full, err := Open(res.Path, OpenOptions{TmpDir: t.TempDir()})
	require.NoError(t, err)
	defer full.Close()
	want, err := full.SBOM()
	require.NoError(t, err)
	assert.Equal(t, want, readEntry(t, full, SBOMName), "SBOM gives the entry's bytes")

	p, err := Open(res.Path, OpenOptions{VerifyOnly: true})
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, os.Remove(res.Path))
	got, err := p.SBOM()
	require.NoError(t, err, "nothing is read again")
	assert.Equal(t, want, got)
}

// A signed package signs its SBOM: the SBOM's digest is in checksums.txt,
// whose digest is in the signed manifest. An SBOM changed after signing,
// or rewritten with a matching checksums.txt, is refused.
func TestTheSignatureCoversTheSBOM(t *testing.T) {
	pkg, pub := signedDemo(t)
	edited := tampered(t, pkg, func(es []tarEntry) []tarEntry {
		i := indexOf(t, es, SBOMName)
		es[i].data = bytes.Replace(es[i].data, []byte(`"name": "demo"`), []byte(`"name": "oops"`), 1)
		return es
	})
	_, err := Open(edited, OpenOptions{PublicKey: pub, VerifyOnly: true})
	require.ErrorContains(t, err, "entry "+SBOMName)
	require.ErrorContains(t, err, "content changed")

	rewritten := tampered(t, pkg, func(es []tarEntry) []tarEntry {
		i := indexOf(t, es, SBOMName)
		es[i].data = bytes.Replace(es[i].data, []byte(`"name": "demo"`), []byte(`"name": "oops"`), 1)
		c := indexOf(t, es, ChecksumsName)
		sums, err := ParseChecksums(es[c].data)
		require.NoError(t, err)
		sums[SBOMName] = sha256Hex(es[i].data)
		es[c].data = sums.Marshal()
		return es
	})
	_, err = Open(rewritten, OpenOptions{PublicKey: pub, VerifyOnly: true})
	require.ErrorContains(t, err, "checksums.txt was changed")
}
