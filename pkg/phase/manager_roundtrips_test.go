package phase

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// asker is a test phase that sends each host as many commands as it is
// told, all hosts in parallel as real phases do.
type asker struct {
	base
	title string
	n     map[string]int
}

func (a *asker) Title() string { return a.title }
func (a *asker) Run(ctx context.Context) error {
	return a.state.Hosts.Parallel(ctx, 0, func(ctx context.Context, h *node.Host) error {
		for range a.n[h.String()] {
			if _, err := h.Conn.Sudo(ctx, "true"); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestManagerCountsRoundTripsPerPhase checks the manager attributes each
// command to the phase that sent it, logs one line per host and phase
// (n=0 for a host a phase left alone) and keeps the counts in the report.
func TestManagerCountsRoundTripsPerPhase(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := &v1alpha1.Cluster{}
	c.Spec.Hosts = []v1alpha1.Host{{Hostname: "kc0"}, {Hostname: "kw0"}}
	s := node.New(c, &v1alpha1.Distro{}, node.Options{}, log)
	for _, h := range s.Hosts {
		h.Conn = s.Report.CountRoundTrips(h.String(), &hosttest.Fake{Name: h.String()})
	}
	m := &Manager{State: s, Phases: []Phase{
		&asker{title: "probe", n: map[string]int{"kc0": 1, "kw0": 1}},
		&asker{title: "write", n: map[string]int{"kc0": 3}},
	}}
	require.NoError(t, m.Run(context.Background()))
	assert.Equal(t, []node.RoundTrip{
		{Phase: "probe", Host: "kc0", N: 1},
		{Phase: "probe", Host: "kw0", N: 1},
		{Phase: "write", Host: "kc0", N: 3},
	}, s.Report.RoundTrips())

	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="round trips"`) {
			_, rest, _ := strings.Cut(l, `msg="round trips" `)
			lines = append(lines, rest)
		}
	}
	assert.Equal(t, []string{
		"phase=probe host=kc0 n=1",
		"phase=probe host=kw0 n=1",
		"phase=write host=kc0 n=3",
		"phase=write host=kw0 n=0",
	}, lines)
}
