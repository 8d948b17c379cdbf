package release

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerifyChecksums(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("a.tar.gz", "a")
	write("b.zip", "b")
	// sha256 of "a" and "b".
	const sumA = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
	const sumB = "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"
	write("checksums.txt", sumA+"  a.tar.gz\n"+sumB+"  b.zip\n")
	names, err := VerifyChecksums(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.tar.gz", "b.zip"}, names)

	write("b.zip", "c")
	_, err = VerifyChecksums(dir)
	require.ErrorContains(t, err, "checksums.txt:2: b.zip has sha256")

	write("checksums.txt", sumA+"  ../a.tar.gz\n")
	_, err = VerifyChecksums(dir)
	require.ErrorContains(t, err, "not \"<sha256>  <file>\"")

	write("checksums.txt", "")
	_, err = VerifyChecksums(dir)
	require.ErrorContains(t, err, "lists no file")
}
