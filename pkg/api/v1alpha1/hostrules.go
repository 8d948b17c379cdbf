package v1alpha1

import (
	"fmt"
	"path"
)

// CheckHostPath accepts a path cargoship may write, as root, on a host:
// absolute, clean, no "..", no shell characters. A definition's targets
// pass the same rule but for cleanness; a package's index is read without
// the definition, so it must name each file one way only.
func CheckHostPath(p string) error {
	if !isCleanAbsPath(p) {
		return fmt.Errorf("%q must be an absolute path without '..' or shell characters", p)
	}
	if c := path.Clean(p); c != p {
		return fmt.Errorf("%q is not a clean path; write %s", p, c)
	}
	return nil
}

// CheckOwnerName accepts what may own a file on a host: a user or group
// name as useradd takes it, or a numeric id.
func CheckOwnerName(s string) error {
	if !unixUserOrGrp.MatchString(s) {
		return fmt.Errorf("%q is not a user or group name", s)
	}
	return nil
}
