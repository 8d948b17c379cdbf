package pkgfile

import (
	"fmt"
	"path"
	"strings"
)

// Fixed entry names at the root of a package. They come first in the
// archive, in this order, so a reader knows what to trust before it reads
// any payload.
const (
	ManifestName  = "manifest.yaml"
	SignatureName = "manifest.sig"
	ChecksumsName = "checksums.txt"
)

// LayoutVersion is the newest layout this cargoship writes and reads; Open
// refuses a package laid out by a newer, unknown scheme rather than
// misreading it. Layout 2 added the SBOM entry: create writes 2 only when
// the package carries one, so a package built with skip_sbom still opens
// in a cargoship that knows layout 1 only.
const LayoutVersion = layoutSBOM

// The layouts create writes: without an SBOM, and with one.
const (
	layoutWithoutSBOM = 1
	layoutSBOM        = 2
)

// SBOMName is the package's own SBOM (CycloneDX JSON), one entry like any
// other: listed in checksums.txt and the index, so a signature covers it.
const SBOMName = string(KindSBOM) + "/cargoship.cdx.json"

// Kind is the top-level directory of a payload entry: which list of the
// definition it came from.
type Kind string

// The payload kinds, one directory each.
const (
	KindFiles     Kind = "files"     // spec.config.files: every host
	KindOS        Kind = "os"        // spec.config.os.files: chosen per host by selector
	KindManifests Kind = "manifests" // spec.config.manifests: applied from the leader
	KindSELinux   Kind = "selinux"   // spec.config.os.selinux.modules
	KindImages    Kind = "images"    // one image archive per architecture
	KindSBOM      Kind = "sbom"      // the package's SBOM; nothing apply places
)

// Kinds lists every payload kind in archive order.
var Kinds = []Kind{KindFiles, KindImages, KindManifests, KindOS, KindSBOM, KindSELinux}

// EntryName is where list item index of kind lives in the package:
// files/<i>/<name>. The index is the position in the definition's list, so
// an entry names exactly one item of the definition.
func EntryName(kind Kind, index int, name string) string {
	return fmt.Sprintf("%s/%d/%s", kind, index, name)
}

// ImageEntryName is the entry holding the image archive for arch.
func ImageEntryName(archiveName string) string {
	return string(KindImages) + "/" + archiveName
}

// FileName is the package's file name: cargoship-<name>-<arch|multi>-<version>
// with .tar.zst, or .tar when uncompressed.
func FileName(name string, arches []string, version string, uncompressed bool) string {
	arch := "multi"
	if len(arches) == 1 {
		arch = arches[0]
	}
	n := "cargoship-" + name + "-" + arch
	if version != "" {
		n += "-" + version
	}
	if uncompressed {
		return n + ".tar"
	}
	return n + ".tar.zst"
}

// checkEntryName refuses anything a reader must not write outside its
// directory, or that no writer of this layout produces.
func checkEntryName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.Contains(name, "\\") {
		return fmt.Errorf("entry name %q is not a clean relative path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || part == "." {
			return fmt.Errorf("entry name %q leaves the package", name)
		}
	}
	switch name {
	case ManifestName, SignatureName, ChecksumsName:
		return nil
	}
	top, rest, ok := strings.Cut(name, "/")
	if !ok || rest == "" {
		return fmt.Errorf("entry name %q is not under one of the payload directories", name)
	}
	for _, k := range Kinds {
		if Kind(top) == k {
			return nil
		}
	}
	return fmt.Errorf("entry name %q is not under one of the payload directories", name)
}

// safeBaseName is the last element of a target or source path, refused when
// it could not name a file.
func safeBaseName(p string) (string, error) {
	b := path.Base(strings.TrimRight(p, "/"))
	if b == "" || b == "." || b == ".." || b == "/" || strings.ContainsAny(b, "\x00\\") {
		return "", fmt.Errorf("%q does not end in a file name", p)
	}
	return b, nil
}
