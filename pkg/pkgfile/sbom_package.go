package pkgfile

import (
	"path"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/version"
)

// packageSBOM lists what a package carries: every payload entry as a file
// (where it goes on a host, its sha256, where it came from) and every image
// of every image archive as a container (reference, manifest digest,
// architecture). d is the resolved definition with build filled; entries
// are the staged entries, the SBOM itself not among them. The root
// component is the package, and depends on every entry; an image archive
// depends on the images in it.
func packageSBOM(d *v1alpha1.Distro, fileName string, entries []Entry) SBOM {
	b := d.Build
	root := SBOMComponent{
		Type: "platform", BOMRef: "package", Name: d.Metadata.Name, Version: b.Version, Description: d.Metadata.Description,
		Properties: props(
			"cargoship:package", fileName,
			"cargoship:engine", d.Spec.Type,
			"cargoship:engineVersion", d.Spec.Version,
			"cargoship:architectures", strings.Join(b.Architectures, ","),
		),
	}
	bom := SBOM{
		BOMFormat: "CycloneDX", SpecVersion: SBOMSpecVersion, Version: 1,
		Metadata: &SBOMMetadata{
			Timestamp: b.Timestamp,
			Tools:     &SBOMTools{Components: []SBOMComponent{{Type: "application", Name: "cargoship", Version: version.String()}}},
			Component: &root,
		},
		Components: []SBOMComponent{},
	}
	rootDeps := SBOMDepends{Ref: root.BOMRef}
	var deps []SBOMDepends
	for _, e := range entries {
		bom.Components = append(bom.Components, fileComponent(e, b.Version))
		rootDeps.DependsOn = append(rootDeps.DependsOn, e.Name)
		if len(e.Images) == 0 {
			continue
		}
		archive := SBOMDepends{Ref: e.Name}
		for _, img := range e.Images {
			c := imageComponent(e, img)
			bom.Components = append(bom.Components, c)
			archive.DependsOn = append(archive.DependsOn, c.BOMRef)
		}
		deps = append(deps, archive)
	}
	bom.Dependencies = append([]SBOMDepends{rootDeps}, deps...)
	return bom
}

// fileComponent is one payload entry. Its name is where apply puts it
// (the target, or the file in a directory target), else the entry name;
// the definition gives files no version of their own, so a file carries
// the package's.
func fileComponent(e Entry, pkgVersion string) SBOMComponent {
	file := path.Base(e.Name)
	name := e.Name
	switch {
	case e.Target != "" && e.IsDirectory:
		name = path.Join(e.Target, file)
	case e.Target != "":
		name = e.Target
	}
	c := SBOMComponent{
		Type: "file", BOMRef: e.Name, Name: name, Version: pkgVersion,
		Hashes: []SBOMHash{{Alg: "SHA-256", Content: e.SHA256}},
	}
	if isDownloadURL(e.Source) {
		c.PURL = genericPURL(file, pkgVersion, e.Source, e.SHA256)
		c.ExternalReferences = []SBOMExternalRef{{Type: "distribution", URL: e.Source}}
	}
	var sel v1alpha1.Selector
	if e.Selector != nil {
		sel = *e.Selector
	}
	c.Properties = props(
		"cargoship:entry", e.Name,
		"cargoship:kind", string(e.Kind),
		"cargoship:target", e.Target,
		"cargoship:mode", e.Mode.String(),
		"cargoship:size", strconv.FormatInt(e.Size, 10),
		"cargoship:architecture", e.Architecture,
		"cargoship:source", localSource(e.Source),
		"cargoship:extractPath", e.ExtractPath,
		"cargoship:selinuxModule", e.Module,
		"cargoship:selector:package", sel.Package,
		"cargoship:selector:os", sel.OS,
		"cargoship:selector:profile", sel.Profile,
	)
	return c
}

// imageComponent is one image of archive e, named by its original
// reference (the one the hosts see, whatever mirror it was pulled from).
func imageComponent(e Entry, img Image) SBOMComponent {
	repo, tag, _ := imageName(img.Ref)
	v := tag
	if v == "" {
		v = img.Digest
	}
	c := SBOMComponent{
		Type: "container", BOMRef: e.Architecture + "/" + img.Ref, Name: repo, Version: v,
		PURL: ociPURL(img.Ref, img.Digest, e.Architecture),
		Properties: props(
			"cargoship:reference", img.Ref,
			"cargoship:architecture", e.Architecture,
			"cargoship:platform", "linux/"+e.Architecture,
			"cargoship:archive", e.Name,
		),
	}
	if alg, hex, ok := strings.Cut(img.Digest, ":"); ok && alg == "sha256" {
		c.Hashes = []SBOMHash{{Alg: "SHA-256", Content: hex}}
	}
	return c
}

// localSource is a source that is not a download (a path in the
// definition's directory); "" for downloads and inline data, which the
// purl and external reference already say.
func localSource(s string) string {
	if isDownloadURL(s) {
		return ""
	}
	return s
}

// props pairs names and values, leaving out empty values.
func props(kv ...string) []SBOMProperty {
	var out []SBOMProperty
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out = append(out, SBOMProperty{Name: kv[i], Value: kv[i+1]})
		}
	}
	return out
}
