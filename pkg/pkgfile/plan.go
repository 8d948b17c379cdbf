package pkgfile

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// plannedEntry is one payload entry before it is fetched: its index record
// without digest and size, and how to get its bytes.
type plannedEntry struct {
	Entry
	field  string // the definition field it came from, for errors
	shasum string // expected sha256 of the source; "" is unchecked
	data   *string
}

// plan resolves the definition for arches: it drops list items selected for
// an architecture the package is not built for (the resolved definition
// then lists exactly what the package carries, and indexes match), and
// names every entry.
func plan(d *v1alpha1.Distro, arches []string) ([]plannedEntry, error) {
	cfg := &d.Spec.Config
	cfg.Files = keepArches(cfg.Files, arches)
	cfg.OS.Files = keepArches(cfg.OS.Files, arches)
	cfg.Manifests = keepArches(cfg.Manifests, arches)

	var out []plannedEntry
	lists := []struct {
		kind  Kind
		field string
		files []v1alpha1.File
	}{
		{KindFiles, "spec.config.files", cfg.Files},
		{KindOS, "spec.config.os.files", cfg.OS.Files},
		{KindManifests, "spec.config.manifests", cfg.Manifests},
	}
	for _, l := range lists {
		for i, f := range l.files {
			pe, err := planFile(l.kind, i, f)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", l.field, i, err)
			}
			pe.field = fmt.Sprintf("%s[%d]", l.field, i)
			out = append(out, pe)
		}
	}
	if se := cfg.OS.SELinux; se != nil {
		for i, m := range se.Modules {
			field := fmt.Sprintf("spec.config.os.selinux.modules[%d]", i)
			name, err := sourceBaseName(m.Source)
			if err != nil {
				return nil, fmt.Errorf("%s.source: %w", field, err)
			}
			out = append(out, plannedEntry{
				Entry: Entry{
					Name: EntryName(KindSELinux, i, name), Kind: KindSELinux, Index: i,
					Source: m.Source, Mode: 0o644, Module: m.Name, Priority: m.Priority,
				},
				field: field, shasum: m.Shasum,
			})
		}
	}
	return out, nil
}

// keepArches drops files selected for an architecture not being built.
func keepArches(files []v1alpha1.File, arches []string) []v1alpha1.File {
	var out []v1alpha1.File
	for _, f := range files {
		if f.Selector != nil && f.Selector.Architecture != "" && !slices.Contains(arches, f.Selector.Architecture) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func planFile(kind Kind, i int, f v1alpha1.File) (plannedEntry, error) {
	name, err := fileEntryBaseName(kind, i, f)
	if err != nil {
		return plannedEntry{}, err
	}
	def := uint32(0o644)
	if f.Executable {
		def = 0o755
	}
	mode, err := f.Perm.Mode(def)
	if err != nil {
		return plannedEntry{}, fmt.Errorf("perm: %w", err)
	}
	if f.Executable && mode&0o111 == 0 {
		return plannedEntry{}, fmt.Errorf("perm %04o has no execute bit, but executable is true", mode)
	}
	pe := plannedEntry{
		Entry: Entry{
			Name: EntryName(kind, i, name), Kind: kind, Index: i,
			Source: f.Source, ExtractPath: f.ExtractPath, Target: f.Target, IsDirectory: f.IsDirectory,
			Mode: Mode(mode), Executable: f.Executable, User: f.User, Group: f.Group,
			Symlinks: f.Symlinks, Selector: f.Selector,
		},
		shasum: f.Shasum,
	}
	if f.Selector != nil {
		pe.Architecture = f.Selector.Architecture
	}
	if f.Source == "" {
		data := f.Data
		pe.data = &data
	}
	return pe, nil
}

// fileEntryBaseName is the file name an entry is stored under: the
// target's, or for a directory target (or a manifest without one) the
// name of what was fetched.
func fileEntryBaseName(kind Kind, i int, f v1alpha1.File) (string, error) {
	if f.Target != "" && !f.IsDirectory {
		return safeBaseName(f.Target)
	}
	switch {
	case f.ExtractPath != "":
		return safeBaseName(f.ExtractPath)
	case f.Source != "":
		return sourceBaseName(f.Source)
	case kind == KindManifests:
		return fmt.Sprintf("manifest-%d.yaml", i), nil
	}
	return "", fmt.Errorf("cannot name the file: no target, extractPath or source")
}

// sourceBaseName is the file name at the end of a path or URL.
func sourceBaseName(src string) (string, error) {
	if strings.Contains(src, "://") {
		u, err := url.Parse(src)
		if err != nil {
			return "", fmt.Errorf("%q is not a URL: %w", src, err)
		}
		return safeBaseName(u.Path)
	}
	return safeBaseName(src)
}
