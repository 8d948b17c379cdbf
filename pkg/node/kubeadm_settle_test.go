package node

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// kubeletPods is the kubelet's /pods for static pods name=hash.
func kubeletPods(pods ...string) string {
	var items []string
	for _, p := range pods {
		name, hash, _ := strings.Cut(p, "=")
		items = append(items, fmt.Sprintf(`{"metadata":{"name":%q,"annotations":{%q:"file",%q:%q}}}`,
			name, annotationConfigSource, annotationConfigHash, hash))
	}
	// a pod from the API (a DaemonSet's) is not the kubelet's own
	items = append(items, `{"metadata":{"name":"kube-proxy-x","annotations":{"kubernetes.io/config.source":"api"}}}`)
	return `{"items":[` + strings.Join(items, ",") + `]}`
}

// mirrorPod is a mirror pod in the API: name=hash, its one container's id
// and whether it runs and is ready.
func mirrorPod(nameHash, id string, running bool) string {
	name, hash, _ := strings.Cut(nameHash, "=")
	state := `{"waiting":{}}`
	if running {
		state = `{"running":{}}`
	}
	return fmt.Sprintf(`{"metadata":{"name":%q,"annotations":{%q:%q}},"status":{"containerStatuses":[{"name":"c","ready":%t,"restartCount":0,"containerID":"containerd://%s","state":%s}]}}`,
		name, annotationConfigMirror, hash, running, id, state)
}

func mirrorPods(pods ...string) string { return `{"items":[` + strings.Join(pods, ",") + `]}` }

func TestControlPlaneSignature(t *testing.T) {
	manifests := "kube-apiserver.yaml\netcd.yaml\n"
	kl := kubeletPods("kube-apiserver-kc0=new1", "etcd-kc0=e1")
	whole := mirrorPods(mirrorPod("kube-apiserver-kc0=new1", "aaa", true), mirrorPod("etcd-kc0=e1", "bbb", true))

	sig, err := controlPlaneSignature(manifests, kl, whole)
	require.NoError(t, err)
	assert.Equal(t, "etcd-kc0/c=bbb#0 kube-apiserver-kc0/c=aaa#0", sig)

	for name, tc := range map[string]struct{ manifests, kubelet, mirrors, want string }{
		"kubelet still reading": {manifests, kubeletPods("etcd-kc0=e1"), whole, "the kubelet has read 1 of its 2 static pod manifests"},
		"old spec still mirrored": {manifests, kl, mirrorPods(mirrorPod("kube-apiserver-kc0=old0", "aaa", true), mirrorPod("etcd-kc0=e1", "bbb", true)),
			"kube-apiserver-kc0 in the API mirrors spec old0, the kubelet runs new1"},
		"no mirror yet":   {manifests, kl, mirrorPods(mirrorPod("etcd-kc0=e1", "bbb", true)), "kube-apiserver-kc0 has no mirror pod in the API yet"},
		"not running yet": {manifests, kl, mirrorPods(mirrorPod("kube-apiserver-kc0=new1", "aaa", false), mirrorPod("etcd-kc0=e1", "bbb", true)), "kube-apiserver-kc0: container c is not running and ready"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := controlPlaneSignature(tc.manifests, tc.kubelet, tc.mirrors)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// settleFleet is one kubeadm controller whose control plane reads as
// mirrors(n) on the n-th sample, and whose /readyz answers readyz(n).
func settleFleet(t *testing.T, mirrors func(n int32) string, readyz func(n int32) error) (*Fleet, *Host) {
	t.Helper()
	poll, timeout := settlePoll, settleTimeout
	settlePoll, settleTimeout = time.Millisecond, 2*time.Second
	t.Cleanup(func() { settlePoll, settleTimeout = poll, timeout })
	var n atomic.Int32
	f := &hosttest.Fake{Name: "kc0"}
	f.On("/etc/kubernetes/manifests", "kube-apiserver.yaml\n")
	f.On("proxy/pods", kubeletPods("kube-apiserver-kc0=new1"))
	f.Handle("kube-system", func(hosttest.Call) (string, error) { return mirrors(n.Add(1)), nil })
	f.Handle("/readyz", func(hosttest.Call) (string, error) {
		if err := readyz(n.Load()); err != nil {
			return "", err
		}
		return "ok", nil
	})
	return upstreamController(t, f)
}

// After kubeadm upgrade the kubelet recreates the API server: the wait
// goes on past the old spec's mirror, past a container that restarts, and
// past an API server that answers but is not ready, and ends once the same
// containers are seen settleSamples times.
func TestWaitControlPlaneSettled(t *testing.T) {
	var seen []string
	s, h := settleFleet(t, func(n int32) string {
		switch {
		case n <= 2:
			seen = append(seen, "old")
			return mirrorPods(mirrorPod("kube-apiserver-kc0=old0", "aaa", true))
		case n <= 4: // the new container, restarted once
			seen = append(seen, "new")
			return mirrorPods(mirrorPod("kube-apiserver-kc0=new1", fmt.Sprintf("id%d", n), true))
		}
		seen = append(seen, "settled")
		return mirrorPods(mirrorPod("kube-apiserver-kc0=new1", "final", true))
	}, func(n int32) error {
		if n == 5 {
			return stderr("Error from server (InternalError): [-]poststarthook/rbac/bootstrap-roles failed")
		}
		return nil
	})
	u := s.Engine.(engine.KubeadmUpgrader)
	require.NoError(t, s.waitControlPlaneSettled(context.Background(), h, u))
	// samples 5 (readyz not ready), then 6, 7, 8 the same: settled at 8
	assert.Len(t, seen, 8)
}

func TestWaitControlPlaneSettledGivesUpNamingWhy(t *testing.T) {
	s, h := settleFleet(t, func(int32) string {
		return mirrorPods(mirrorPod("kube-apiserver-kc0=old0", "aaa", true))
	}, func(int32) error { return nil })
	err := s.waitControlPlaneSettled(context.Background(), h, s.Engine.(engine.KubeadmUpgrader))
	require.ErrorContains(t, err, "kc0: the control plane did not settle in 2s: kube-apiserver-kc0 in the API mirrors spec old0, the kubelet runs new1")
}

func TestWaitControlPlaneSettledAsksItsOwnAPIServer(t *testing.T) {
	s, h := settleFleet(t, func(int32) string {
		return mirrorPods(mirrorPod("kube-apiserver-kc0=new1", "a", true))
	}, func(int32) error { return nil })
	require.NoError(t, s.waitControlPlaneSettled(context.Background(), h, s.Engine.(engine.KubeadmUpgrader)))
	for _, c := range h.Conn.(*hosttest.Fake).Calls() {
		if strings.Contains(c.Cmd, "kubectl") {
			assert.Contains(t, c.Cmd, "--server=https://10.0.0.1:6443", "through kc0's own API server, not a VIP or another controller")
		}
	}
}
