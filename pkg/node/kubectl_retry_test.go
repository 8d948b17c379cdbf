package node

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// kubectlFleet is one running kubeadm controller whose kubectl answers
// with what answer says, counting the calls.
func kubectlFleet(t *testing.T, answer func(n int32) error) (*Fleet, *atomic.Int32) {
	t.Helper()
	wait := apiAwayWait
	apiAwayWait = 10 * time.Millisecond
	t.Cleanup(func() { apiAwayWait = wait })
	calls := &atomic.Int32{}
	f := &hosttest.Fake{Name: "kc0"}
	f.Handle("kubectl", func(c hosttest.Call) (string, error) {
		if err := answer(calls.Add(1)); err != nil {
			return "", &host.ExitError{Host: "kc0", Cmd: c.Cmd, Code: 1, Stderr: err.Error()}
		}
		return "node/kc0 uncordoned", nil
	})
	s, _ := upstreamController(t, f)
	return s, calls
}

// upstreamController is a fleet of one running kubeadm controller, kc0
// at 10.0.0.1, answered by f.
func upstreamController(t *testing.T, f *hosttest.Fake) (*Fleet, *Host) {
	t.Helper()
	eng, err := engine.For(v1alpha1.EngineUpstream)
	require.NoError(t, err)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kc0", Role: v1alpha1.RoleController, PrivateAddress: "10.0.0.1"}, Conn: f, EngineRunning: true}
	return &Fleet{Engine: eng, Hosts: Hosts{h}, Report: &Report{}}, h
}

type stderr string

func (s stderr) Error() string { return string(s) }

// After kubeadm upgrade the kubelet recreates the API server's static pod:
// an uncordon then meets a refused connection for a while (seen in CI's
// upstream walk) and must wait for it, not fail the upgrade.
func TestKubectlWaitsWhileTheAPIServerIsAway(t *testing.T) {
	s, calls := kubectlFleet(t, func(n int32) error {
		if n <= 2 {
			return stderr("The connection to the server 10.78.32.11:6443 was refused - did you specify the right host or port?")
		}
		return nil
	})
	require.NoError(t, s.Uncordon(context.Background(), "kc0"))
	assert.EqualValues(t, 3, calls.Load())
}

func TestKubectlDoesNotRetryARefusal(t *testing.T) {
	s, calls := kubectlFleet(t, func(int32) error {
		return stderr(`Error from server (Forbidden): nodes "kc0" is forbidden: User "x" cannot patch resource "nodes"`)
	})
	err := s.Uncordon(context.Background(), "kc0")
	require.ErrorContains(t, err, "Forbidden")
	assert.EqualValues(t, 1, calls.Load(), "a denial is an answer: it is not asked again")
}

func TestKubectlGivesUpOnAnAPIServerThatStaysAway(t *testing.T) {
	max := apiAwayMaxWait
	apiAwayMaxWait = 20 * time.Millisecond
	t.Cleanup(func() { apiAwayMaxWait = max })
	s, calls := kubectlFleet(t, func(int32) error {
		return stderr("Unable to connect to the server: dial tcp 10.0.0.1:6443: connect: connection refused")
	})
	_, err := s.ClusterNodes(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")
	assert.EqualValues(t, apiAwayAttempts, calls.Load())
}
