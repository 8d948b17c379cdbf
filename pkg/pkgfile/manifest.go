package pkgfile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// Manifest is manifest.yaml: the resolved definition (with build filled)
// and, under package:, the index of every payload entry and the digest of
// checksums.txt. The signature covers these bytes, so it covers the index
// and, through the digest, every entry.
type Manifest struct {
	v1alpha1.Distro `json:",inline"`
	Package         Index `json:"package"`
}

// Index describes the package's payload.
type Index struct {
	// Layout is LayoutVersion of the writer.
	Layout int `json:"layout"`
	// Checksums is the sha256 (hex) of checksums.txt.
	Checksums string `json:"checksums"`
	// Entries lists every payload entry, sorted by name.
	Entries []Entry `json:"entries"`
}

// Entry is one payload entry: what it is, where it came from, and what
// apply needs to put it on a host.
type Entry struct {
	// Name is the path inside the package (files/0/k3s).
	Name string `json:"name"`
	// Kind and Index name the definition list item it came from; Index is
	// -1 for image archives.
	Kind  Kind `json:"kind"`
	Index int  `json:"index"`
	// Source and ExtractPath are what was fetched ("" for inline data).
	Source      string `json:"source,omitempty"`
	ExtractPath string `json:"extractPath,omitempty"`
	// Target is the absolute path on a host ("" for SELinux modules and
	// image archives, which apply places itself).
	Target string `json:"target,omitempty"`
	// IsDirectory says Target is a directory the file goes into.
	IsDirectory bool `json:"isDirectory,omitempty"`
	// SHA256 (hex) and Size of the entry's bytes.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Mode is the permission to install with: perm when the definition
	// gives one, else 0755 for executables and 0644 otherwise.
	Mode       Mode `json:"mode"`
	Executable bool `json:"executable,omitempty"`
	// User and Group own the file on the host; empty means root.
	User  string `json:"user,omitempty"`
	Group string `json:"group,omitempty"`
	// Symlinks are links apply creates to Target.
	Symlinks []string `json:"symlinks,omitempty"`
	// Selector chooses hosts; nil means every host.
	Selector *v1alpha1.Selector `json:"selector,omitempty"`
	// Architecture is set on image archives and on files fetched for one
	// architecture only.
	Architecture string `json:"architecture,omitempty"`
	// Module and Priority are set on SELinux policy modules.
	Module   string `json:"module,omitempty"`
	Priority int    `json:"priority,omitempty"`
	// Images lists what an image archive holds.
	Images []Image `json:"images,omitempty"`
}

// Image is one image in an image archive.
type Image struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	Size   int64  `json:"size,omitempty"`
}

// manifestDigestPrefix starts the last line of manifest.yaml: the sha256
// of every byte before that line. Nothing else records the manifest's own
// digest, and without it an unsigned package could have its definition
// edited unnoticed. (It catches corruption and careless edits; only a
// signature stops a deliberate forger.)
const manifestDigestPrefix = "# manifest-sha256: "

// MarshalManifest renders manifest.yaml. The bytes are what is signed, so
// they are produced in exactly one place. What Open would refuse is refused
// here, so create fails naming the entry rather than writing a package
// nothing opens.
func MarshalManifest(m *Manifest) ([]byte, error) {
	b, err := renderManifest(m)
	if err != nil {
		return nil, err
	}
	if _, err := ParseManifest(b); err != nil {
		return nil, fmt.Errorf("render %s: it would not read back: %w", ManifestName, err)
	}
	return b, nil
}

// renderManifest is MarshalManifest without the read-back check.
func renderManifest(m *Manifest) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# cargoship package manifest: the resolved definition and the index of every entry.\n")
	b, err := yaml.MarshalWithOptions(m, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", ManifestName, err)
	}
	buf.Write(b)
	if !bytes.HasSuffix(b, []byte("\n")) {
		buf.WriteByte('\n')
	}
	buf.WriteString(manifestDigestPrefix + sha256Hex(buf.Bytes()) + "\n")
	return buf.Bytes(), nil
}

// checkManifestDigest verifies the trailing digest line of manifest.yaml.
func checkManifestDigest(data []byte) error {
	body := bytes.TrimSuffix(data, []byte("\n"))
	i := bytes.LastIndexByte(body, '\n')
	last := body[i+1:]
	if !bytes.HasPrefix(last, []byte(manifestDigestPrefix)) {
		return fmt.Errorf("%s: the last line is not its %q digest line", ManifestName, strings.TrimSpace(manifestDigestPrefix))
	}
	want := string(bytes.TrimPrefix(last, []byte(manifestDigestPrefix)))
	if got := sha256Hex(data[:i+1]); got != want {
		return fmt.Errorf("%s was changed: its content hashes to %s, its digest line says %s", ManifestName, got, want)
	}
	return nil
}

// ParseManifest reads manifest.yaml strictly, through the guards every
// document passes (size, nesting, tokens, keys per mapping; one YAML
// document; docs/validate.md#limits), refusing aliases, which no writer of
// this layout makes, and any unknown key, since a reader that skipped it
// could miss something it should check. The definition part is validated
// as a definition file is, and the index as checkIndex says.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > maxManifestSize {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d it may be", ManifestName, len(data), maxManifestSize)
	}
	if err := checkManifestDigest(data); err != nil {
		return nil, err
	}
	m := &Manifest{}
	doc, err := v1alpha1.DecodeStrict(ManifestName, data, m)
	if err != nil {
		return nil, err
	}
	if m.Package.Layout == 0 {
		return nil, fmt.Errorf("%s: package.layout is missing; this is not a cargoship package manifest", ManifestName)
	}
	if m.Package.Layout > LayoutVersion {
		return nil, fmt.Errorf("%s: package layout %d is newer than this cargoship reads (%d); use a newer cargoship", ManifestName, m.Package.Layout, LayoutVersion)
	}
	// The definition part by the rules of a definition file, so apply can
	// trust it as far as create did.
	doc.ValidateDistro(&m.Distro)
	if m.Build == nil || len(m.Build.Architectures) == 0 {
		doc.Errorf("build.architectures", "is missing; the package does not say what it was built for")
	}
	checkIndex(doc, m)
	if err := doc.Err(); err != nil {
		return nil, err
	}
	return m, nil
}
