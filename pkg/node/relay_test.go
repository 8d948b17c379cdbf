package node

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

func relayHost(name string) *Host {
	return &Host{Spec: &v1alpha1.Host{Hostname: name}, Facts: Facts{PrivateAddress: "10.0.0." + name[len(name)-1:]}}
}

func testRelays(t *testing.T) *relays {
	t.Helper()
	r := relaysFrom((&Fleet{}).WithFanout(t.Context()))
	require.NotNil(t, r)
	return r
}

// waitAsync runs wait in the background, so a test can check it blocks.
func waitAsync(r *relays, ctx context.Context, h *Host, sum string) <-chan turn {
	ch := make(chan turn, 1)
	go func() {
		t, err := r.wait(ctx, h, sum)
		if err == nil {
			ch <- t
		}
		close(ch)
	}()
	return ch
}

func blocked(t *testing.T, ch <-chan turn) {
	t.Helper()
	select {
	case got := <-ch:
		t.Fatalf("did not wait: got %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
}

func got(t *testing.T, ch <-chan turn) turn {
	t.Helper()
	select {
	case tr, ok := <-ch:
		require.True(t, ok, "the wait ended without a turn")
		return tr
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting")
	}
	return turn{}
}

// The file leaves this machine once: the first host sends it from here,
// the next waits for a holder rather than being sent it too, and each
// holder serves one host at a time.
func TestRelaysSendFromHereOnceThenHolderByHolder(t *testing.T) {
	r := testRelays(t)
	a, b, c, d := relayHost("a1"), relayHost("b2"), relayHost("c3"), relayHost("d4")
	ctx := t.Context()

	first, err := r.wait(ctx, a, "sum")
	require.NoError(t, err)
	assert.True(t, first.fromHere)

	bw := waitAsync(r, ctx, b, "sum")
	blocked(t, bw)
	r.holds(a, "sum", "/opt/bin/k3s")
	r.fromHereDone("sum")
	tb := got(t, bw)
	assert.False(t, tb.fromHere)
	assert.Equal(t, a, tb.holder.host)
	assert.Equal(t, "/opt/bin/k3s", tb.holder.path)

	cw := waitAsync(r, ctx, c, "sum")
	blocked(t, cw) // a is busy serving b
	r.release("sum", a, true)
	tc := got(t, cw)
	assert.Equal(t, a, tc.holder.host)

	r.holds(b, "sum", "/opt/bin/k3s")
	td := got(t, waitAsync(r, ctx, d, "sum"))
	assert.Equal(t, b, td.holder.host, "a new holder serves while a is busy")
}

// A send from here that failed passes the turn to the next host waiting,
// which sends from here in its place.
func TestRelaysFailedSendFromHerePassesTheTurn(t *testing.T) {
	r := testRelays(t)
	a, b := relayHost("a1"), relayHost("b2")
	first, err := r.wait(t.Context(), a, "sum")
	require.NoError(t, err)
	require.True(t, first.fromHere)
	bw := waitAsync(r, t.Context(), b, "sum")
	blocked(t, bw)
	r.fromHereDone("sum")
	assert.True(t, got(t, bw).fromHere)
}

// Two failed relays and no success: the hosts cannot reach each other,
// and the phase sends the rest from here without trying again.
func TestRelaysGiveUpAfterTwoFailures(t *testing.T) {
	r := testRelays(t)
	a, b, c := relayHost("a1"), relayHost("b2"), relayHost("c3")
	r.holds(a, "sum", "/f")
	for range maxRelayFailures {
		tr, err := r.wait(t.Context(), b, "sum")
		require.NoError(t, err)
		require.False(t, tr.fromHere)
		r.release("sum", a, false)
	}
	tr, err := r.wait(t.Context(), c, "sum")
	require.NoError(t, err)
	assert.True(t, tr.fromHere)

	// one success keeps it on through later failures
	r = testRelays(t)
	r.holds(a, "sum", "/f")
	for _, ok := range []bool{true, false, false} {
		tr, err := r.wait(t.Context(), b, "sum")
		require.NoError(t, err)
		require.False(t, tr.fromHere)
		r.release("sum", a, ok)
	}
	tr, err = r.wait(t.Context(), c, "sum")
	require.NoError(t, err)
	assert.False(t, tr.fromHere)
}

func TestRelaysWaitEndsWithItsContext(t *testing.T) {
	r := testRelays(t)
	a, b := relayHost("a1"), relayHost("b2")
	_, err := r.wait(t.Context(), a, "sum")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := r.wait(ctx, b, "sum"); done <- err }()
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled wait went on waiting")
	}
}

// Fan-out is for large files in real runs only.
func TestFanoutForWhichFiles(t *testing.T) {
	h := relayHost("a1")
	big := Placement{Name: "k3s", SHA256: "sum", Size: RelayMinSize}
	s := &Fleet{}
	ctx := s.WithFanout(t.Context())
	assert.NotNil(t, s.fanoutFor(ctx, h, big))
	assert.Nil(t, s.fanoutFor(ctx, h, Placement{SHA256: "sum", Size: RelayMinSize - 1}), "small file")
	assert.Nil(t, s.fanoutFor(t.Context(), h, big), "no fan-out in the phase")
	assert.Nil(t, s.fanoutFor(ctx, &Host{Spec: &v1alpha1.Host{}}, big), "no private address")
	for _, o := range []Options{{NoFanout: true}, {DryRun: true}} {
		s := &Fleet{Options: o}
		assert.Nil(t, relaysFrom(s.WithFanout(t.Context())), "%+v", o)
	}
}
