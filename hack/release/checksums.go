package release

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// VerifyChecksums checks every "<sha256>  <name>" line of dir/checksums.txt
// against the file of that name in dir, as `sha256sum -c checksums.txt`
// does there, and returns the names it checked.
func VerifyChecksums(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "checksums.txt"))
	if err != nil {
		return nil, err
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(want) != 64 || name == "" || strings.ContainsRune(name, '/') {
			return nil, fmt.Errorf("checksums.txt:%d: not \"<sha256>  <file>\": %q", n, sc.Text())
		}
		got, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("checksums.txt:%d: %w", n, err)
		}
		if got != want {
			return nil, fmt.Errorf("checksums.txt:%d: %s has sha256 %s, not %s", n, name, got, want)
		}
		names = append(names, name)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("checksums.txt lists no file")
	}
	return names, nil
}
