package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/k8s"
)

// TestUpstreamThreeControllers is kubeadm's stacked-etcd HA on real
// Kubernetes: kc0 founds the cluster with kubeadm init --upload-certs, kc1
// and kc2 join as control planes one at a time with the certificate key,
// each running its own etcd member, the worker joins, and a second apply
// changes nothing.
func TestUpstreamThreeControllers(t *testing.T) {
	e2eutil.RequireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	sf := e2eutil.StartSuiteFleet(ctx, t, fleet.Spec{Name: "e2ek8sha", Control: 3, Worker: 1, NodeRuntime: true})
	pkg := buildPackage(t, k8s.V1_35_4)
	w := newWorld(t, sf.Wait(t))

	rep := w.apply(pkg)
	assert.Equal(t, []string{"kc0"}, changedHosts(rep.Ordered(), "and found the cluster"), "kc0 founds the cluster")
	assert.ElementsMatch(t, []string{"kc1", "kc2"}, changedHosts(rep.Ordered(), "and join as a controller"), "two controllers join")
	w.allReadyAt("v"+pkg.Release.Kubernetes, 5*time.Minute)

	// Stacked etcd: one member per controller, each a static pod, and
	// every member in the cluster's member list.
	w.eventually("an etcd static pod Running on each controller", 5*time.Minute, func() string {
		out, err := w.tryKubectl("", "-n", "kube-system", "get", "pods", "-l", "component=etcd", "-o", "jsonpath={range .items[*]}{.spec.nodeName}={.status.phase} {end}")
		if err != nil {
			return err.Error()
		}
		for _, c := range []string{"kc0", "kc1", "kc2"} {
			if !strings.Contains(out, c+"=Running") {
				return out
			}
		}
		return ""
	})
	members := w.kubectl("", "-n", "kube-system", "exec", "etcd-kc0", "--", "/usr/local/bin/etcdctl",
		"--endpoints=https://127.0.0.1:2379", "--cacert=/etc/kubernetes/pki/etcd/ca.crt",
		"--cert=/etc/kubernetes/pki/etcd/server.crt", "--key=/etc/kubernetes/pki/etcd/server.key", "member", "list")
	assert.Equal(t, 3, strings.Count(strings.TrimSpace(members), "\n")+1, "three etcd members:\n%s", members)
	for _, c := range []string{"kc0", "kc1", "kc2"} {
		assert.Contains(t, members, c+", https://", "%s is a member", c)
	}

	log := w.crossNodeProbe("kc2", "kw0", "ha")
	assert.Contains(t, log, "resolved kubernetes.default.svc.cluster.local 10.96.0.1")

	e2eutil.AssertConverged(t, w.in, hostNames(w), func(dry bool) *node.Report {
		return e2eutil.RunWhole(t, w.options(pkg.Path, dry), action.ApplyPhases())
	})
}
