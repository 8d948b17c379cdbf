package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/hack/release"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// The arguments .goreleaser.yaml passes, and the ones it must not.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	_, k, err := pkgfile.GenerateKeyPair()
	require.NoError(t, err)
	priv, pub := filepath.Join(dir, "k.key"), filepath.Join(dir, "k.pub")
	require.NoError(t, pkgfile.WriteKeyPair(priv, pub, k, false))
	file := filepath.Join(dir, "checksums.txt")
	require.NoError(t, os.WriteFile(file, []byte("x\n"), 0o644))

	require.NoError(t, run([]string{"sign", "-key", priv, "-out", file + ".sig", file}))
	require.NoError(t, release.VerifyFile(pub, file, file+".sig"))

	for _, bad := range [][]string{
		{},
		{"verify", file},
		{"sign", "-out", file + ".sig", file},
		{"sign", "-key", priv, "-out", file + ".sig"},
		{"sign", "-key", priv, "-out", file + ".sig", file, file},
		{"sbom", "-out", filepath.Join(dir, "x.json"), file},
		{"sbom", "-version", "v1", "-out", filepath.Join(dir, "x.json"), file}, // not a Go binary
	} {
		require.Error(t, run(bad), "%q", bad)
	}
}
