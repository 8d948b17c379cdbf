package pkgfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Checksums maps every payload entry to its sha256 (hex). It is written
// once, by Create, and checked once, by Open; nothing else computes it.
type Checksums map[string]string

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Marshal renders checksums.txt the way sha256sum does: "<hex>  <name>",
// one line per entry, sorted by name, so `sha256sum -c` can check an
// extracted package too.
func (c Checksums) Marshal() []byte {
	var b bytes.Buffer
	for _, name := range slices.Sorted(mapKeys(c)) {
		fmt.Fprintf(&b, "%s  %s\n", c[name], name)
	}
	return b.Bytes()
}

// ParseChecksums reads checksums.txt strictly: every line well-formed,
// names clean and sorted, none twice.
func ParseChecksums(data []byte) (Checksums, error) {
	c := Checksums{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	prev := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || !hexSHA256.MatchString(sum) {
			return nil, fmt.Errorf("%s line %d: want \"<sha256 hex>  <entry>\", got %q", ChecksumsName, n, line)
		}
		if err := checkEntryName(name); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", ChecksumsName, n, err)
		}
		if name == ManifestName || name == SignatureName || name == ChecksumsName {
			return nil, fmt.Errorf("%s line %d: %s is not a payload entry", ChecksumsName, n, name)
		}
		if _, dup := c[name]; dup {
			return nil, fmt.Errorf("%s line %d: %s is listed twice", ChecksumsName, n, name)
		}
		if name < prev {
			return nil, fmt.Errorf("%s line %d: %s is out of order; the list is sorted by name", ChecksumsName, n, name)
		}
		prev = name
		c[name] = sum
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", ChecksumsName, err)
	}
	return c, nil
}

// sha256Hex is the hex digest of b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
