package release

import (
	"crypto/sha1"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"runtime/debug"
	"strings"
)

// The CycloneDX 1.5 JSON this package writes: only the fields it fills.
// https://cyclonedx.org/docs/1.5/json/
type (
	BOM struct {
		BOMFormat    string       `json:"bomFormat"`
		SpecVersion  string       `json:"specVersion"`
		SerialNumber string       `json:"serialNumber"`
		Version      int          `json:"version"`
		Metadata     Metadata     `json:"metadata"`
		Components   []Component  `json:"components"`
		Dependencies []Dependency `json:"dependencies"`
	}
	Metadata struct {
		Tools     Tools     `json:"tools"`
		Component Component `json:"component"`
	}
	Tools struct {
		Components []Component `json:"components"`
	}
	Component struct {
		Type       string     `json:"type"`
		BOMRef     string     `json:"bom-ref,omitempty"`
		Name       string     `json:"name"`
		Version    string     `json:"version,omitempty"`
		PURL       string     `json:"purl,omitempty"`
		Hashes     []Hash     `json:"hashes,omitempty"`
		Properties []Property `json:"properties,omitempty"`
	}
	Hash struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	}
	Property struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	Dependency struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	}
)

// SBOMTool names this package's generator in every BOM it writes.
const SBOMTool = "cargoship-release-tool"

// WriteSBOM writes the CycloneDX SBOM of the Go binary at binPath to w.
// version is the release version (the binary's module version is
// "(devel)" in a build from a checkout).
func WriteSBOM(w io.Writer, binPath, version string) error {
	bom, err := SBOMOf(binPath, version)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(bom)
}

// SBOMOf reads the build information Go linked into the binary: its main
// module, every module compiled in with its version and go.sum hash, the
// Go standard library at the toolchain's version, and the build settings.
// It lists what is in the binary, not what go.mod allows, so a module only
// the tests use is not in it.
func SBOMOf(binPath, version string) (BOM, error) {
	bi, err := buildinfo.ReadFile(binPath)
	if err != nil {
		return BOM{}, fmt.Errorf("%s: %w", binPath, err)
	}
	digest, err := fileSHA256(binPath)
	if err != nil {
		return BOM{}, err
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	main := Component{
		Type:    "application",
		Name:    path.Base(bi.Path),
		Version: version,
		PURL:    purl(bi.Main.Path, version) + qualifiers(settings["GOOS"], settings["GOARCH"]),
		Hashes:  []Hash{{Alg: "SHA-256", Content: digest}},
	}
	main.BOMRef = main.PURL
	main.Properties = append(main.Properties, Property{"cdx:gomod:binary:name", bi.Path})
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "-trimpath", "vcs.revision", "vcs.time", "vcs.modified"} {
		if v, ok := settings[k]; ok {
			main.Properties = append(main.Properties, Property{"cdx:gomod:build:env:" + k, v})
		}
	}
	bom := BOM{
		BOMFormat:    "CycloneDX",
		SpecVersion:  "1.5",
		SerialNumber: serialNumber(digest),
		Version:      1,
		Metadata: Metadata{
			Tools:     Tools{Components: []Component{{Type: "application", Name: SBOMTool}}},
			Component: main,
		},
		Components: []Component{},
	}
	std := Component{Type: "library", Name: "std", Version: bi.GoVersion, PURL: purl("std", bi.GoVersion)}
	std.BOMRef = std.PURL
	bom.Components = append(bom.Components, std)
	dependsOn := []string{std.BOMRef}
	for _, d := range bi.Deps {
		c, err := moduleComponent(d)
		if err != nil {
			return BOM{}, fmt.Errorf("%s: %w", binPath, err)
		}
		bom.Components = append(bom.Components, c)
		dependsOn = append(dependsOn, c.BOMRef)
	}
	// The binary's module graph is not in its build information, only the
	// set of modules, so every module is a dependency of the binary.
	bom.Dependencies = []Dependency{{Ref: main.BOMRef, DependsOn: dependsOn}}
	return bom, nil
}

// moduleComponent is one module linked in; a replaced module is listed as
// what replaced it, since that is the code in the binary.
func moduleComponent(d *debug.Module) (Component, error) {
	m := d
	if d.Replace != nil {
		m = d.Replace
	}
	c := Component{Type: "library", Name: m.Path, Version: m.Version, PURL: purl(m.Path, m.Version)}
	c.BOMRef = c.PURL
	if m.Sum != "" {
		h, err := h1Hex(m.Sum)
		if err != nil {
			return Component{}, fmt.Errorf("module %s: %w", m.Path, err)
		}
		// The go.sum hash: a SHA-256 over the module's files (golang.org/x/mod
		// sumdb/dirhash Hash1), as cyclonedx-gomod records it.
		c.Hashes = []Hash{{Alg: "SHA-256", Content: h}}
	}
	if d.Replace != nil {
		c.Properties = []Property{{"cdx:gomod:replaces", d.Path + "@" + d.Version}}
	}
	return c, nil
}

// h1Hex is the hex of a go.sum "h1:" hash (base64 of a SHA-256).
func h1Hex(sum string) (string, error) {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return "", fmt.Errorf("hash %q is not an h1: hash", sum)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != sha256.Size {
		return "", fmt.Errorf("hash %q is not an h1: hash", sum)
	}
	return hex.EncodeToString(raw), nil
}

// purl is the package URL of a Go module (github.com/package-url/purl-spec,
// type golang); the path's slashes are the purl's namespace separators.
func purl(modPath, version string) string {
	return "pkg:golang/" + modPath + "@" + version + "?type=module"
}

func qualifiers(goos, goarch string) string {
	q := ""
	if goos != "" {
		q += "&goos=" + goos
	}
	if goarch != "" {
		q += "&goarch=" + goarch
	}
	return q
}

// serialNumber is a name-based UUID (version 5, RFC 9562) of the binary's
// digest, so the same binary always has the same BOM (a random one would
// make two runs differ). CycloneDX 1.5's schema takes UUID versions 1 to 5.
func serialNumber(digestHex string) string {
	h := sha1.New() // #nosec G401 -- UUID version 5 is defined over SHA-1
	h.Write(uuidNamespaceOID[:])
	h.Write([]byte("sha256:" + digestHex))
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50 // version 5
	b[8] = b[8]&0x3f | 0x80 // the RFC 4122 variant
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// uuidNamespaceOID is RFC 9562's namespace for ISO OIDs; any fixed
// namespace would do, this one is as good as its neighbours.
var uuidNamespaceOID = [16]byte{0x6b, 0xa7, 0xb8, 0x12, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
