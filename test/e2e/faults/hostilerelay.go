package faults

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// relayedTarget is where hostileRelay puts the blob on the receiver, beside
// the package's own files and outside the package's index.
const relayedTarget = "/var/lib/cargoship-faults/relayed"

// hostileRelay (issue 39, item 1): the controller, a sender gone hostile,
// is handed the relay key for the blob's transfer to the worker. It keeps a
// connection of its own open with the key and, on it, a session that
// holds the worker's partial file and writes into it seconds later, after
// the check; after the transfer it opens one more session to write
// again. The worker must end with the blob's bytes or with an error, never
// with the sender's, and the late session must write nothing.
func hostileRelay(t *testing.T, w *world) {
	ctx := context.Background()
	sender, receiver := controller, worker
	if _, held := w.in.Try(t, sender, host.Script(`test -f "$1"`, blobTarget)); !held {
		// run alone (-run TestFaults/hostile-relay): the sender gets the blob
		_, _, _, err := w.run(t, false, 0)
		require.NoError(t, err, "the fresh fleet converges")
	}
	hs := &hosttest.HostileSender{Runner: w.in.Conn(t, sender), Payload: "EVIL", Delay: 4 * time.Second, Dir: "/root/cargoship-hostile"}
	to := w.in.Conn(t, receiver)
	t.Cleanup(func() {
		_ = hs.Close(context.Background())
		w.in.Root(t, receiver, host.Script(`rm -f -- "$1" "$1".cargoship-* "$1.honest"`, relayedTarget))
	})
	toAddr := strings.Fields(w.in.Root(t, receiver, "hostname -I"))[0]
	fromAddr := w.in.Root(t, sender, host.Script(`ip -4 -o route get "$1" | sed -n 's/.* src \([^ ]*\).*/\1/p'`, toAddr))
	user := strings.TrimSpace(mustRun(t, to, "id -un"))
	peer, err := host.ReadPeer(ctx, to, user, toAddr)
	require.NoError(t, err)

	blob := blobBytes()
	upload := func(sender host.Runner, dst string) host.UploadResult {
		res, err := host.Upload(ctx, to, host.ReaderAtSource(bytes.NewReader(blob), blobSize), blobSize, w.blob, dst, 0o644, "",
			host.ViaPeer(func(ctx context.Context, part string, size int64) (host.PeerOutcome, error) {
				if _, err := host.Relay(ctx, sender, fromAddr, blobTarget, to, peer, part, size); err != nil {
					return host.PeerFailed, err
				}
				return host.PeerSent, nil
			}))
		require.NoError(t, err, "the upload to %s", dst)
		return res
	}
	// the same relay from an honest sender works, so what follows is the
	// hostile sender's doing
	honest := upload(w.in.Conn(t, sender), relayedTarget+".honest")
	require.True(t, honest.Relayed, "an honest relay from %s to %s: %v", sender, receiver, honest.PeerErr)
	w.in.Root(t, receiver, host.Script(`rm -f -- "$1.honest"`, relayedTarget))

	res := upload(hs, relayedTarget)
	t.Logf("relayed: %v, sent from here: %d bytes, the relay's error: %v", res.Relayed, res.BytesSent, res.PeerErr)
	if !res.Relayed {
		// a relay that ran but whose bytes the hostile session spoilt
		// before the check; any other failure means the test proved nothing
		require.ErrorContains(t, res.PeerErr, "did not check out", "the relay itself must have worked")
	}
	assert.Contains(t, w.in.Root(t, sender, host.Script(`cat -- "$1/first.out" 2>/dev/null; ls -- "$1"`, hs.Dir)), "cm",
		"the hostile sender's own connection was up")

	// the hostile session writes from Delay after the key came for five
	// seconds: wait it out, then look
	time.Sleep(hs.Delay + 7*time.Second)
	assert.Equal(t, w.blob, strings.Fields(w.in.Root(t, receiver, host.Script(`sha256sum < "$1"`, relayedTarget)))[0],
		"the placed file holds the blob's bytes, whatever the sender wrote after the check")
	late, err := hs.Late(ctx)
	require.NoError(t, err)
	assert.NotContains(t, late, "rc=0", "a session opened on the kept connection after the revoke must not write: %s", late)
	assert.Empty(t, w.in.Root(t, receiver, host.Script(`ls -d -- "$1".cargoship-part* 2>/dev/null; true`, relayedTarget)),
		"no partial file or grant record is left, and the late session made none")
	assert.Equal(t, w.blob, strings.Fields(w.in.Root(t, receiver, host.Script(`sha256sum < "$1"`, relayedTarget)))[0])
	assert.NotContains(t, w.in.Root(t, receiver, host.Script(`cat -- "$1"`, peer.AuthorizedKeys)), "cargoship-relay-", "the relay's key is revoked")
}

// mustRun runs cmd as the login user.
func mustRun(t *testing.T, r host.Runner, cmd string) string {
	t.Helper()
	out, err := r.Run(context.Background(), cmd)
	require.NoError(t, err, cmd)
	return out
}
