package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// A dry run must not claim an upload that the run would skip: an
// executable whose right bytes already wait at its staged path is not
// sent again, only installed later.
func TestWouldPlaceCountsARightStagedCopyAsPlaced(t *testing.T) {
	r, root := hostRoot(t)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r}
	s := &Fleet{}
	body := []byte("the engine binary")
	sum := sha256.Sum256(body)
	pl := Placement{Name: "files/0/k3s", Target: "/usr/local/bin/k3s", Staged: true, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body))}
	ctx := context.Background()

	would, err := s.WouldPlace(ctx, h, pl)
	require.NoError(t, err)
	assert.True(t, would, "nothing on the host: an upload")

	staged := filepath.Join(root, StagedPath(pl.Target))
	require.NoError(t, os.MkdirAll(filepath.Dir(staged), 0o755))
	require.NoError(t, os.WriteFile(staged, []byte("an older binary"), 0o755))
	would, err = s.WouldPlace(ctx, h, pl)
	require.NoError(t, err)
	assert.True(t, would, "a staged copy with other bytes: an upload")

	require.NoError(t, os.WriteFile(staged, body, 0o755))
	would, err = s.WouldPlace(ctx, h, pl)
	require.NoError(t, err)
	assert.False(t, would, "the right bytes are staged already: nothing to upload")

	pl.Staged = false
	would, err = s.WouldPlace(ctx, h, pl)
	require.NoError(t, err)
	assert.True(t, would, "a file that is not staged is checked at its target only")
}
