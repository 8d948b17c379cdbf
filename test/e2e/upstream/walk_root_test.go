package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/k8s"
)

// fleetName is the upstream walk's own container fleet.
const fleetName = "e2ek8s"

// TestUpstreamWalk is the upstream engine on real Kubernetes (docs/e2e.md,
// "The upstream walk"): kubeadm, kubelet, containerd and the control
// plane built from source, one controller and one worker on container
// fleet hosts able to run a kubelet. apply founds the cluster with kubeadm
// init and joins the worker with a bootstrap token; every node is Ready
// from its real kubelet, CoreDNS runs, and a pod on the worker resolves
// the API's Service name and reaches a pod on the controller across the
// pod network; a second apply changes nothing; then apply upgrades the
// cluster to the newer release with kubeadm upgrade, node by node, drained.
func TestUpstreamWalk(t *testing.T) {
	e2eutil.RequireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Minute)
	defer cancel()
	sf := e2eutil.StartSuiteFleet(ctx, t, fleet.Spec{Name: fleetName, Control: 1, Worker: 1, NodeRuntime: true})
	older := buildPackage(t, k8s.V1_34_4)
	newer := buildPackage(t, k8s.V1_35_4)
	w := newWorld(t, sf.Wait(t))

	rep := w.apply(older)
	founded, joined := changedHosts(rep.Ordered(), "and found the cluster"), changedHosts(rep.Ordered(), "and join")
	assert.Equal(t, []string{"kc0"}, founded, "kc0 founds the cluster")
	assert.Equal(t, []string{"kw0"}, joined, "kw0 joins it")
	kubeadmConfig := w.in.Root(t, "kc0", "cat /etc/cargoship/kubeadm.yaml")
	assert.Contains(t, kubeadmConfig, "kind: InitConfiguration", "the founder ran kubeadm init from cargoship's config")
	assert.Contains(t, w.in.Root(t, "kw0", "cat /etc/cargoship/kubeadm.yaml"), "caCertHashes", "the worker pins the cluster CA")

	older.wantCluster(t, w)

	t.Run("converged", func(t *testing.T) {
		e2eutil.AssertConverged(t, w.in, hostNames(w), func(dry bool) *node.Report {
			return e2eutil.RunWhole(t, w.options(older.Path, dry), action.ApplyPhases())
		})
	})

	t.Run("upgrade", func(t *testing.T) {
		up := w.apply(newer)
		var order []string
		for _, ch := range up.Ordered() {
			if strings.HasPrefix(ch.What, "upgraded ") {
				order = append(order, ch.Host)
			}
		}
		assert.Equal(t, []string{"kc0", "kw0"}, order, "the controller first, then the worker, each once")
		images := w.in.Root(t, "kc0", "grep -h 'image:' /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/manifests/kube-controller-manager.yaml /etc/kubernetes/manifests/kube-scheduler.yaml")
		assert.Equal(t, 3, strings.Count(images, ":v"+newer.Release.Kubernetes), "the control plane's static pods run %s:\n%s", newer.Release.Kubernetes, images)
		assert.Contains(t, w.in.Root(t, "kc0", "grep -h 'image:' /etc/kubernetes/manifests/etcd.yaml"), "etcd:"+newer.Release.EtcdImageTag, "kubeadm upgraded etcd to the release's")
		newer.wantCluster(t, w)
	})
}

// wantCluster is a working cluster at the package's release: every node
// Ready at it, CoreDNS available, and the workload across nodes.
func (p *upstreamPackage) wantCluster(t *testing.T, w *world) {
	t.Helper()
	version := "v" + p.Release.Kubernetes
	w.allReadyAt(version, 5*time.Minute)
	w.eventually("CoreDNS available", 5*time.Minute, func() string {
		out, err := w.tryKubectl("", "-n", "kube-system", "get", "deployment", "coredns", "-o", "jsonpath={.status.availableReplicas}/{.status.replicas} {.spec.template.spec.containers[0].image}")
		if err != nil {
			return err.Error()
		}
		counts, image, _ := strings.Cut(out, " ")
		if a, n, _ := strings.Cut(counts, "/"); a == "" || a == "0" || a != n || !strings.HasSuffix(image, ":"+p.Release.CoreDNSImageTag) {
			return "coredns " + out
		}
		return ""
	})
	log := w.crossNodeProbe("kc0", "kw0", strings.ReplaceAll(p.Release.Kubernetes, ".", "-"))
	require.Contains(t, log, "resolved kubernetes.default.svc.cluster.local 10.96.0.1", "CoreDNS answers for the API's Service")
	require.Contains(t, log, "probe-serve-", "the worker's pod reached the controller's over the pod network")
	t.Logf("the workload at %s:\n%s", version, log)
}

func changedHosts(changes []node.Change, suffix string) []string {
	var hosts []string
	for _, ch := range changes {
		if strings.HasSuffix(ch.What, suffix) || strings.Contains(ch.What, suffix+" ") {
			hosts = append(hosts, ch.Host)
		}
	}
	return hosts
}

func hostNames(w *world) []string {
	names := make([]string, len(w.fleet.Hosts))
	for i, h := range w.fleet.Hosts {
		names[i] = h.Name
	}
	return names
}
