package node

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/retry"
)

// How long kubectl is tried again while the API server does not answer: a
// control plane whose static pods the kubelet recreates (after kubeadm
// upgrade apply, or when an upgraded kubelet restarts them) is away for
// tens of seconds under load, and a node's uncordon must not fail the
// run for it (docs/apply.md, "Failures and interrupts").
var (
	apiAwayWait    = 3 * time.Second
	apiAwayMaxWait = 15 * time.Second
)

const apiAwayAttempts = 15 // about three minutes of pauses

// apiAwayMarks are what kubectl prints when it reached no API server, or
// one that is starting: the request did nothing, so it may run again.
// Denials, not-found and validation errors are not among them.
var apiAwayMarks = []string{
	"connection refused",
	"was refused",
	"connection reset by peer",
	"TLS handshake timeout",
	"Unable to connect to the server",
	"the server is currently unable to handle the request",
	"etcdserver: leader changed",
	"etcdserver: request timed out",
	"http2: client connection lost",
	"net/http: request canceled while waiting for connection",
}

// APIAway says err is kubectl's "no API server answered".
func APIAway(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, m := range apiAwayMarks {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// whileAPIAway runs op, and again while it fails because the API server is
// away, up to apiAwayAttempts times; any other error ends it at once. The
// bound is on attempts, not time: a drain runs under its own --timeout.
func (s *Fleet) whileAPIAway(ctx context.Context, what string, op func(ctx context.Context) (string, error)) (string, error) {
	return retry.Value(ctx, retry.Policy{
		Wait: apiAwayWait, MaxWait: apiAwayMaxWait, Attempts: apiAwayAttempts,
		Log: s.Logger(), Level: slog.LevelInfo,
		Message: "the API server does not answer; trying again", Attrs: []any{"kubectl", what},
	}, func(ctx context.Context) (string, error) {
		out, err := op(ctx)
		if err != nil && !APIAway(err) {
			return out, retry.Permanent(err)
		}
		return out, err
	})
}
