package host

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/localfile"
)

// ssh.keyPath: /dev/zero was read until memory ran out.
func TestKeyFileRefusesSpecialFiles(t *testing.T) {
	_, err := (&keyring{}).keyFile("/dev/zero")
	require.ErrorIs(t, err, localfile.ErrNotRegular)
}
