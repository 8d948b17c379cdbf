package pkgfile

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Mode is a file permission, written as an octal string ("0755") in the
// manifest and in JSON so a reader sees what chmod would be given.
type Mode uint32

// Perm is the mode as an fs.FileMode.
func (m Mode) Perm() fs.FileMode { return fs.FileMode(m) & fs.ModePerm }

// String is the octal form.
func (m Mode) String() string { return fmt.Sprintf("%04o", uint32(m)) }

// MarshalText writes the octal form.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads an octal mode, with or without a leading 0 or 0o.
func (m *Mode) UnmarshalText(b []byte) error {
	s := strings.TrimPrefix(strings.TrimPrefix(strings.Trim(string(b), `"' `), "0o"), "0O")
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o7777 {
		return fmt.Errorf("%q is not an octal file mode like 0644", string(b))
	}
	*m = Mode(v)
	return nil
}
