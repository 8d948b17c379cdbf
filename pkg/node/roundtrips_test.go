package node

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// TestRoundTripsCountEachCommandOnce runs a known number of commands per
// host from many goroutines at once (as a phase's Parallel does) and wants
// exactly that number back: one too many or too few fails.
func TestRoundTripsCountEachCommandOnce(t *testing.T) {
	ctx := context.Background()
	r := &Report{}
	want := map[string]int{"kc0": 37, "kw0": 1, "kw1": 20}
	fakes := map[string]*hosttest.Fake{}
	conns := map[string]host.Runner{}
	for name := range want {
		fakes[name] = &hosttest.Fake{Name: name}
		conns[name] = r.CountRoundTrips(name, fakes[name])
	}
	r.StartPhase("Prepare hosts")
	var wg sync.WaitGroup
	for name, n := range want {
		for i := range n {
			wg.Go(func() {
				var err error
				if i%2 == 0 {
					_, err = conns[name].Sudo(ctx, "true")
				} else {
					_, err = conns[name].Run(ctx, "true")
				}
				assert.NoError(t, err)
			})
		}
	}
	wg.Go(func() { _ = r.RoundTrips() }) // reading while counting is safe
	wg.Wait()
	got := r.EndPhase()
	assert.Equal(t, []RoundTrip{
		{Phase: "Prepare hosts", Host: "kc0", N: 37},
		{Phase: "Prepare hosts", Host: "kw0", N: 1},
		{Phase: "Prepare hosts", Host: "kw1", N: 20},
	}, got)
	for name, f := range fakes {
		assert.Len(t, f.Calls(), want[name], "every command reached the host, once")
	}
	assert.Equal(t, got, r.RoundTrips())
}

// TestRoundTripsPerPhase keeps phases apart, in the order they started, a
// phase title run twice as two entries, and commands between phases under
// "(outside phases)".
func TestRoundTripsPerPhase(t *testing.T) {
	ctx := context.Background()
	r := &Report{}
	c := r.CountRoundTrips("kc0", &hosttest.Fake{Name: "kc0"})
	run := func(n int) {
		for range n {
			_, err := c.Sudo(ctx, "true")
			require.NoError(t, err)
		}
	}
	run(1) // before any phase
	r.StartPhase("a")
	run(2)
	assert.Equal(t, []RoundTrip{{Phase: "a", Host: "kc0", N: 2}}, r.EndPhase())
	run(1) // between phases
	r.StartPhase("b")
	assert.Empty(t, r.EndPhase(), "a phase that sent nothing has no entry")
	r.StartPhase("a")
	run(3)
	r.EndPhase()
	assert.Nil(t, r.EndPhase(), "no phase is current after EndPhase")
	assert.Equal(t, []RoundTrip{
		{Phase: "(outside phases)", Host: "kc0", N: 2},
		{Phase: "a", Host: "kc0", N: 2},
		{Phase: "a", Host: "kc0", N: 3},
	}, r.RoundTrips())
}

// TestRoundTripsOfAnUpload counts what host.Upload sends through the
// wrapper against what the host received (today the probe, the stream
// through cat and the check and rename; pkg/host may batch them, so the
// test holds the count to the host's, not to a number).
func TestRoundTripsOfAnUpload(t *testing.T) {
	r := &Report{}
	f := &hosttest.Fake{Name: "kw0"}
	r.StartPhase("Upload files")
	uploadSomething(t, r.CountRoundTrips("kw0", f))
	got := r.EndPhase()
	require.Len(t, got, 1)
	assert.Equal(t, len(f.Calls()), got[0].N, "%q", f.Commands())
	assert.Greater(t, got[0].N, 1, "an upload that sends is more than its probe")
}

// sftpFake is a Fake that offers SFTP, as host.Conn does, and has no
// sftp-server, so Upload falls back to cat after asking.
type sftpFake struct {
	*hosttest.Fake
	opened int
}

func (s *sftpFake) OpenSFTP(context.Context) (*host.SFTP, error) {
	s.opened++
	return nil, fmt.Errorf("%s: %w", s.Name, host.ErrNoSFTP)
}

// TestCountRoundTripsKeepsSFTPOpener checks the wrapper offers SFTP
// exactly when the runner it wraps does, and counts each session asked
// for.
func TestCountRoundTripsKeepsSFTPOpener(t *testing.T) {
	r := &Report{}
	plain := &hosttest.Fake{Name: "kc0"}
	w := r.CountRoundTrips("kc0", plain)
	_, ok := w.(host.SFTPOpener)
	assert.False(t, ok, "a runner without SFTP must not gain it")
	assert.Same(t, plain, w.(interface{ Unwrap() host.Runner }).Unwrap())

	s := &sftpFake{Fake: &hosttest.Fake{Name: "kw0"}}
	w = r.CountRoundTrips("kw0", s)
	_, ok = w.(host.SFTPOpener)
	require.True(t, ok, "a runner with SFTP must keep it")
	assert.Equal(t, "kw0", w.String())
	assert.Same(t, s, w.(interface{ Unwrap() host.Runner }).Unwrap())

	r.StartPhase("Upload files")
	uploadSomething(t, w)
	got := r.EndPhase()
	require.Len(t, got, 1)
	assert.Equal(t, 1, s.opened, "Upload asked the wrapped runner for SFTP")
	assert.Equal(t, len(s.Calls())+s.opened, got[0].N, "the commands and the SFTP session asked for")
}

func uploadSomething(t *testing.T, r host.Runner) {
	t.Helper()
	const body = "hello"
	res, err := host.Upload(context.Background(), r, host.ReaderAtSource(strings.NewReader(body), int64(len(body))),
		int64(len(body)), "", "/etc/motd", 0o644, "")
	require.NoError(t, err)
	assert.Equal(t, int64(len(body)), res.BytesSent)
}

func TestCountRoundTripsOnNilReport(t *testing.T) {
	var r *Report
	f := &hosttest.Fake{}
	assert.Same(t, f, r.CountRoundTrips("x", f))
}
