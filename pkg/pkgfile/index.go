package pkgfile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// checkIndex holds every index entry to what create writes, since apply
// puts entries on hosts where the index says: targets and links absolute
// and clean, owners valid names, modes without setuid, setgid or sticky
// bits (apply writes the permission bits only), and each name the one
// create gives its definition item. An unsigned manifest is no more
// trusted than its own bytes. Problems go to doc, at their lines.
func checkIndex(doc *v1alpha1.Strict, m *Manifest) {
	items := definitionItems(&m.Distro)
	seen := map[string]int{}
	for i, e := range m.Package.Entries {
		p := fmt.Sprintf("package.entries[%d]", i)
		if err := checkIndexName(e, items); err != nil {
			doc.Errorf(p+".name", "%v", err)
		} else if first, dup := seen[e.Name]; dup {
			doc.Errorf(p+".name", "%s is listed twice (package.entries[%d] too)", e.Name, first)
		} else {
			seen[e.Name] = i
		}
		switch {
		case e.Target == "" && e.Kind != KindImages && e.Kind != KindSELinux && e.Kind != KindSBOM:
			doc.Errorf(p+".target", "is required: where apply puts a %s entry", e.Kind)
		case e.Target != "" && e.Kind == KindSBOM:
			doc.Errorf(p+".target", "must be empty: apply places no %s entry", e.Kind)
		case e.Target != "":
			if err := v1alpha1.CheckHostPath(e.Target); err != nil {
				doc.Errorf(p+".target", "%v", err)
			}
		}
		for j, l := range e.Symlinks {
			if err := v1alpha1.CheckHostPath(l); err != nil {
				doc.Errorf(fmt.Sprintf("%s.symlinks[%d]", p, j), "%v", err)
			}
		}
		if e.Mode > 0o777 {
			doc.Errorf(p+".mode", "%s sets the setuid, setgid or sticky bit, which cargoship does not write", e.Mode)
		}
		for _, who := range []struct{ field, v string }{{"user", e.User}, {"group", e.Group}} {
			if who.v != "" {
				if err := v1alpha1.CheckOwnerName(who.v); err != nil {
					doc.Errorf(p+"."+who.field, "%v", err)
				}
			}
		}
		if !hexSHA256.MatchString(e.SHA256) {
			doc.Errorf(p+".sha256", "%q is not a sha256 in lower-case hex", e.SHA256)
		}
		if e.Size < 0 {
			doc.Errorf(p+".size", "%d is not a size", e.Size)
		}
	}
}

// definitionItems is how many items each kind's list of the definition
// has; an entry's index names one of them.
func definitionItems(d *v1alpha1.Distro) map[Kind]int {
	cfg := &d.Spec.Config
	items := map[Kind]int{KindFiles: len(cfg.Files), KindOS: len(cfg.OS.Files), KindManifests: len(cfg.Manifests)}
	if cfg.OS.SELinux != nil {
		items[KindSELinux] = len(cfg.OS.SELinux.Modules)
	}
	return items
}

// checkIndexName checks an entry's name is the one create gives it:
// <kind>/<index>/<file> for a definition item, images/<archive> for an
// image archive and SBOMName for the SBOM (both index -1).
func checkIndexName(e Entry, items map[Kind]int) error {
	if err := checkEntryName(e.Name); err != nil {
		return err
	}
	parts := strings.Split(e.Name, "/")
	if Kind(parts[0]) != e.Kind {
		return fmt.Errorf("%s is not under %s/, its kind", e.Name, e.Kind)
	}
	if e.Kind == KindImages {
		if len(parts) != 2 || e.Index != -1 {
			return fmt.Errorf("%s is not images/<archive> with index -1", e.Name)
		}
		return nil
	}
	if e.Kind == KindSBOM {
		if e.Name != SBOMName || e.Index != -1 {
			return fmt.Errorf("%s is not %s with index -1", e.Name, SBOMName)
		}
		return nil
	}
	if len(parts) != 3 || parts[1] != strconv.Itoa(e.Index) {
		return fmt.Errorf("%s is not %s/%d/<file>, the name of item %d", e.Name, e.Kind, e.Index, e.Index)
	}
	if e.Index < 0 || e.Index >= items[e.Kind] {
		return fmt.Errorf("%s names item %d of the definition's %s list, which has %d", e.Name, e.Index, e.Kind, items[e.Kind])
	}
	return nil
}
