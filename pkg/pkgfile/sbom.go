package pkgfile

import (
	"bytes"
	"crypto/sha1" // UUID version 5 is defined over SHA-1; it names the BOM, it secures nothing
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// The package's own SBOM is CycloneDX JSON: only the part of the format a
// package needs, written with encoding/json so the bytes are cargoship's to
// keep stable (a package is reproducible, and the SBOM is one of its
// entries). Field names and order are CycloneDX 1.5's.

// SBOMSpecVersion is the CycloneDX version the SBOM follows.
const SBOMSpecVersion = "1.5"

// SBOM is a CycloneDX BOM, as far as cargoship writes one.
type SBOM struct {
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	SerialNumber string          `json:"serialNumber,omitempty"`
	Version      int             `json:"version"`
	Metadata     *SBOMMetadata   `json:"metadata,omitempty"`
	Components   []SBOMComponent `json:"components"`
	Dependencies []SBOMDepends   `json:"dependencies,omitempty"`
}

// SBOMMetadata says what the BOM describes and what wrote it.
type SBOMMetadata struct {
	Timestamp string         `json:"timestamp,omitempty"`
	Tools     *SBOMTools     `json:"tools,omitempty"`
	Component *SBOMComponent `json:"component,omitempty"`
}

// SBOMTools lists the tools that wrote the BOM (CycloneDX 1.5's form).
type SBOMTools struct {
	Components []SBOMComponent `json:"components"`
}

// SBOMComponent is one file, image or application.
type SBOMComponent struct {
	Type               string            `json:"type"`
	BOMRef             string            `json:"bom-ref,omitempty"`
	Name               string            `json:"name"`
	Version            string            `json:"version,omitempty"`
	Description        string            `json:"description,omitempty"`
	Hashes             []SBOMHash        `json:"hashes,omitempty"`
	PURL               string            `json:"purl,omitempty"`
	ExternalReferences []SBOMExternalRef `json:"externalReferences,omitempty"`
	Properties         []SBOMProperty    `json:"properties,omitempty"`
}

// SBOMHash is a digest of a component's bytes.
type SBOMHash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

// SBOMExternalRef is where a component came from.
type SBOMExternalRef struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// SBOMProperty is a name-value pair outside the CycloneDX vocabulary
// (targets, selectors); cargoship's names start with "cargoship:".
type SBOMProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SBOMDepends says what a component is made of.
type SBOMDepends struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// sbomNamespace is the UUID namespace of cargoship SBOM serial numbers,
// fixed once (random bytes): changing it would change every serial.
var sbomNamespace = [16]byte{0x3b, 0x6f, 0x1c, 0x2e, 0x8a, 0x41, 0x5d, 0x07, 0x9c, 0x55, 0x0e, 0x6a, 0x27, 0xd3, 0x4b, 0x10}

// MarshalSBOM renders the BOM with a serial number derived from its
// content: CycloneDX wants a unique serial per BOM, and a random one would
// make two builds of one definition differ. Equal BOMs get equal serials;
// any change in what the BOM lists gives another.
func MarshalSBOM(bom SBOM) ([]byte, error) {
	bom.SerialNumber = ""
	body, err := json.Marshal(bom)
	if err != nil {
		return nil, fmt.Errorf("render the SBOM: %w", err)
	}
	sum := sha256.Sum256(body)
	bom.SerialNumber = "urn:uuid:" + uuidV5(sbomNamespace, sum[:])
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // URLs with & stay readable
	if err := enc.Encode(bom); err != nil {
		return nil, fmt.Errorf("render the SBOM: %w", err)
	}
	return buf.Bytes(), nil
}

// uuidV5 is the RFC 9562 name-based (SHA-1) UUID of name in namespace;
// CycloneDX's schema takes UUID versions 1 to 5 only.
func uuidV5(namespace [16]byte, name []byte) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write(name)
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
