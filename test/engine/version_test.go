package testengine_test

import (
	"crypto/sha1" //nolint:gosec // recomputing Build's stand-in commit
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

func standInCommit(version string) string {
	sum := sha1.Sum([]byte(version)) //nolint:gosec
	return hex.EncodeToString(sum[:])
}

// The --version output is docs/reference/engines.md 2's format to the byte:
// the program name, version and commit (8 characters for k3s, 40 for rke2),
// then the Go line; rke2 is built with boringcrypto as its releases are.
func TestVersionOutputIsTheEnginesFormat(t *testing.T) {
	testtier.Slow(t, "builds the test engine (k3s and rke2 flavours)")
	k3s := engineBinary(t, "k3s", k3sOld)
	out, err := exec.Command(k3s, "--version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^k3s version v1\.35\.3\+k3s1 \(`+standInCommit(k3sOld)[:8]+`\)\ngo version go1\.[0-9.]+\n$`, string(out))

	short, err := exec.Command(k3s, "-v").Output()
	require.NoError(t, err)
	assert.Equal(t, string(out), string(short), "-v is --version's alias")

	rke2 := engineBinary(t, "rke2", rke2Ver)
	out, err = exec.Command(rke2, "--version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^rke2 version v1\.35\.4\+rke2r1 \(`+standInCommit(rke2Ver)+`\)\ngo version go1\.[0-9.]+[ -]X:boringcrypto\n$`, string(out))
}

// The first word is the name the binary was run as, as in k3s
// (app.Name = basename of argv[0]); a name starting with k3s or rke2 also
// picks the engine.
func TestVersionNamesTheProgramAsInvoked(t *testing.T) {
	testtier.Slow(t, "builds the test engine (k3s and rke2 flavours)")
	link := filepath.Join(t.TempDir(), "k3s-agent")
	require.NoError(t, os.Symlink(engineBinary(t, "k3s", k3sOld), link))
	out, err := exec.Command(link, "--version").Output()
	require.NoError(t, err)
	assert.Regexp(t, `^k3s-agent version v1\.35\.3\+k3s1 `, string(out))
}

// The help says what the binary is: a test double.
func TestHelpSaysItIsATestDouble(t *testing.T) {
	testtier.Slow(t, "builds the test engine (k3s and rke2 flavours)")
	for _, args := range [][]string{{"--help"}, {"server", "--help"}, {"agent", "--help"}} {
		out, err := exec.Command(engineBinary(t, "k3s", k3sOld), args...).Output()
		require.NoError(t, err, "%v", args)
		assert.Contains(t, string(out), "test double", "%v", args)
	}
}
