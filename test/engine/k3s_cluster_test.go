package testengine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// A k3s server and two agents as local processes, each on its own
// loopback address, driven with the real kubectl through the kubeconfig
// the server wrote: the cluster cargoship sees after an install.
func TestK3sServerAndTwoAgentsWithRealKubectl(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf(`node-name: srv1
node-ip: %[1]s
bind-address: %[1]s
cluster-init: true
token: cargoship-test-token
tls-san:
  - %[2]s
write-kubeconfig-mode: "0644"
node-label:
  - cargoship.dev/profile=controller
kube-controller-manager-arg:
  - node-monitor-grace-period=6s
kubelet-arg:
  - node-status-update-frequency=1s
`, ip(2), ip(10)))
	srv.start(bin, "server")
	kc := srv.kubeconfig()
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})

	// Agents join with the server's own token file, as cargoship hands it on.
	token := strings.TrimSpace(srv.readFile("/var/lib/rancher/k3s/server/token"))
	agents := map[string]*node{}
	for i, name := range []string{"wrk1", "wrk2"} {
		a := newNode(t, "k3s", name, fmt.Sprintf(`server: https://%s:6443
token: %s
node-name: %s
node-ip: %s
node-label:
  - cargoship.dev/profile=worker
kubelet-arg:
  - node-status-update-frequency=1s
`, ip(2), token, name, ip(3+i)))
		a.start(bin, "agent")
		agents[name] = a
	}
	nodes := waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True", "wrk1": "True", "wrk2": "True"})

	t.Run("nodes carry names, addresses, labels and the engine version", func(t *testing.T) {
		for name, want := range map[string]string{"srv1": ip(2), "wrk1": ip(3), "wrk2": ip(4)} {
			n := nodes[name]
			assert.Equal(t, want, n.internalIP(), name)
			assert.Equal(t, k3sOld, n.Status.NodeInfo.KubeletVersion, name)
			assert.Equal(t, "k3s", n.Metadata.Labels["node.kubernetes.io/instance-type"], name)
			assert.Equal(t, name, n.Metadata.Labels["kubernetes.io/hostname"], name)
			assert.Contains(t, n.Metadata.Annotations["k3s.io/node-args"], "--token=********", name)
			assert.NotContains(t, n.Metadata.Annotations["k3s.io/node-args"], "cargoship-test-token", name)
		}
		for _, role := range []string{"control-plane", "master", "etcd"} {
			assert.Equal(t, "true", nodes["srv1"].Metadata.Labels["node-role.kubernetes.io/"+role], role)
			assert.NotContains(t, nodes["wrk1"].Metadata.Labels, "node-role.kubernetes.io/"+role)
		}
		assert.Equal(t, "controller", nodes["srv1"].Metadata.Labels["cargoship.dev/profile"])
		assert.Equal(t, "worker", nodes["wrk2"].Metadata.Labels["cargoship.dev/profile"])

		table := mustKubectl(t, kc, "get", "nodes")
		assert.Regexp(t, `(?m)^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$`, table)
		assert.Regexp(t, `(?m)^srv1\s+Ready\s+control-plane,etcd,master\s+\S+\s+v1\.35\.3\+k3s1$`, table)
		assert.Regexp(t, `(?m)^wrk1\s+Ready\s+<none>\s+\S+\s+v1\.35\.3\+k3s1$`, table)
	})

	t.Run("the server wrote the engine's token, TLS and kubeconfig files", func(t *testing.T) {
		ca := srv.readFile("/var/lib/rancher/k3s/server/tls/server-ca.crt")
		sum := sha256.Sum256([]byte(ca))
		assert.Equal(t, "K10"+hex.EncodeToString(sum[:])+"::server:cargoship-test-token", token)
		link, err := os.Readlink(srv.path("/var/lib/rancher/k3s/server/node-token"))
		require.NoError(t, err)
		assert.Equal(t, "token", link)
		st, err := os.Stat(srv.path("/var/lib/rancher/k3s/server/token"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		st, err = os.Stat(kc)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "write-kubeconfig-mode")
		assert.Contains(t, srv.readFile("/etc/rancher/k3s/k3s.yaml"), "server: https://"+ip(2)+":6443")
		for _, f := range []string{"client-ca.crt", "client-admin.crt", "serving-kube-apiserver.crt"} {
			assert.FileExists(t, srv.path("/var/lib/rancher/k3s/server/tls/"+f))
		}
		assert.FileExists(t, agents["wrk1"].path("/var/lib/rancher/k3s/agent/client-kubelet.crt"))
		assert.FileExists(t, agents["wrk1"].path("/etc/rancher/node/password"))
		assert.FileExists(t, srv.path("/var/lib/rancher/k3s/server/db/state.json"))
	})

	t.Run("label", func(t *testing.T) {
		assert.Equal(t, "node/wrk1 labeled\n", mustKubectl(t, kc, "label", "node", "wrk1", "cargoship.dev/tier=gold", "--overwrite"))
		assert.Equal(t, "node/wrk1 not labeled\n", mustKubectl(t, kc, "label", "node", "wrk1", "cargoship.dev/tier=gold", "--overwrite"))
		out, err := kubectl(t, kc, "label", "node", "wrk1", "cargoship.dev/tier=silver")
		require.Error(t, err, "a changed value without --overwrite is refused")
		assert.Contains(t, out, "'cargoship.dev/tier' already has a value (gold), and --overwrite is false")
		got := mustKubectl(t, kc, "get", "node", "wrk1", "-o", "jsonpath={.metadata.labels.cargoship\\.dev/tier}")
		assert.Equal(t, "gold", got)
		assert.Equal(t, "node/wrk1 unlabeled\n", mustKubectl(t, kc, "label", "node", "wrk1", "cargoship.dev/tier-"))
		assert.Empty(t, mustKubectl(t, kc, "get", "node", "wrk1", "-o", "jsonpath={.metadata.labels.cargoship\\.dev/tier}"))
	})

	t.Run("cordon and uncordon", func(t *testing.T) {
		assert.Equal(t, "node/wrk1 cordoned\n", mustKubectl(t, kc, "cordon", "wrk1"))
		assert.Equal(t, "node/wrk1 already cordoned\n", mustKubectl(t, kc, "cordon", "wrk1"))
		n := getNode(t, kc, "wrk1")
		assert.True(t, n.Spec.Unschedulable)
		assert.Contains(t, taintKeys(n), "node.kubernetes.io/unschedulable")
		assert.Regexp(t, `(?m)^wrk1\s+Ready,SchedulingDisabled\s`, mustKubectl(t, kc, "get", "nodes"))
		assert.Equal(t, "node/wrk1 uncordoned\n", mustKubectl(t, kc, "uncordon", "wrk1"))
		n = getNode(t, kc, "wrk1")
		assert.False(t, n.Spec.Unschedulable)
		assert.NotContains(t, taintKeys(n), "node.kubernetes.io/unschedulable")
	})

	t.Run("drain evicts what is not a DaemonSet pod", func(t *testing.T) {
		var before []string
		eventually(t, time.Minute, "a DaemonSet pod and a ReplicaSet pod on wrk1", func() error {
			if before = podsOn(t, kc, "wrk1"); len(before) != 2 {
				return fmt.Errorf("pods on wrk1: %v", before)
			}
			return nil
		})
		out, err := kubectl(t, kc, "drain", "wrk1", "--ignore-daemonsets", "--timeout=60s")
		require.Error(t, err, "the ReplicaSet pod has an emptyDir")
		assert.Contains(t, out, "cannot delete Pods with local storage")
		mustKubectl(t, kc, "uncordon", "wrk1")

		out = mustKubectl(t, kc, "drain", "wrk1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
		assert.Contains(t, out, "node/wrk1 cordoned")
		assert.Regexp(t, `Warning: ignoring DaemonSet-managed Pods: kube-system/testengine-node-agent-\w+`, out)
		assert.Regexp(t, `evicting pod kube-system/testengine-workload-\w+`, out)
		assert.Regexp(t, `pod/testengine-workload-\w+ evicted`, out)
		assert.Contains(t, out, "node/wrk1 drained")

		after := podsOn(t, kc, "wrk1")
		require.Len(t, after, 1)
		assert.True(t, strings.HasPrefix(after[0], "testengine-node-agent-"), after[0])
		for _, p := range before {
			if strings.HasPrefix(p, "testengine-workload-") {
				out, err := kubectl(t, kc, "get", "pod", "-n", "kube-system", p)
				require.Error(t, err)
				assert.Contains(t, out, "NotFound")
			}
		}
		eventually(t, time.Minute, "the evicted replica runs elsewhere", func() error {
			running := 0
			for _, n := range []string{"srv1", "wrk2"} {
				for _, p := range podsOn(t, kc, n) {
					if strings.HasPrefix(p, "testengine-workload-") {
						running++
					}
				}
			}
			if running != 3 {
				return fmt.Errorf("%d workload pods on srv1 and wrk2, want 3", running)
			}
			return nil
		})
		assert.Equal(t, "node/wrk1 uncordoned\n", mustKubectl(t, kc, "uncordon", "wrk1"))
	})

	t.Run("the kubeconfig works through a load balancer address in tls-san", func(t *testing.T) {
		dir := t.TempDir()
		tcpProxy(t, ip(10)+":6443", ip(2)+":6443")
		lb := dir + "/lb.yaml"
		require.NoError(t, os.WriteFile(lb, []byte(strings.ReplaceAll(srv.readFile("/etc/rancher/k3s/k3s.yaml"), ip(2), ip(10))), 0o600))
		assert.Contains(t, mustKubectl(t, lb, "get", "nodes"), "srv1")

		// An address the certificate does not name is refused by kubectl.
		tcpProxy(t, ip(11)+":6443", ip(2)+":6443")
		other := dir + "/other.yaml"
		require.NoError(t, os.WriteFile(other, []byte(strings.ReplaceAll(srv.readFile("/etc/rancher/k3s/k3s.yaml"), ip(2), ip(11))), 0o600))
		out, err := kubectl(t, other, "get", "nodes")
		require.Error(t, err)
		assert.Contains(t, out, "x509: certificate is valid for")
	})

	t.Run("without a client certificate the API answers 401", func(t *testing.T) {
		// The admin kubeconfig with its certificate swapped for a
		// token the engine never issued.
		var anon []string
		for _, l := range strings.Split(srv.readFile("/etc/rancher/k3s/k3s.yaml"), "\n") {
			switch {
			case strings.Contains(l, "client-certificate-data"):
				anon = append(anon, "    token: not-a-token-of-this-cluster")
			case !strings.Contains(l, "client-key-data"):
				anon = append(anon, l)
			}
		}
		anonymous := t.TempDir() + "/anonymous.yaml"
		require.NoError(t, os.WriteFile(anonymous, []byte(strings.Join(anon, "\n")), 0o600))
		out, err := kubectl(t, anonymous, "get", "nodes")
		require.Error(t, err)
		assert.Contains(t, out, "Unauthorized")
	})

	t.Run("k3s kubectl runs the real kubectl with the admin kubeconfig", func(t *testing.T) {
		cmd := exec.Command(bin, "kubectl", "get", "node", "srv1", "-o", "name")
		cmd.Env = append(os.Environ(), "CARGOSHIP_TESTENGINE_ROOT="+srv.root, "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, "node/srv1\n", string(out))
	})

	t.Run("a killed agent goes NotReady after the grace period", func(t *testing.T) {
		agents["wrk2"].kill()
		waitNodes(t, kc, 30*time.Second, map[string]string{"srv1": "True", "wrk1": "True", "wrk2": "Unknown"})
		n := getNode(t, kc, "wrk2")
		assert.Contains(t, taintKeys(n), "node.kubernetes.io/unreachable")
		assert.Regexp(t, `(?m)^wrk2\s+NotReady\s`, mustKubectl(t, kc, "get", "nodes"))
		assert.Equal(t, "True", getNode(t, kc, "wrk1").ready(), "the other agent keeps posting status")
	})

	t.Run("delete node", func(t *testing.T) {
		assert.Equal(t, "node \"wrk2\" deleted\n", mustKubectl(t, kc, "delete", "node", "wrk2"))
		waitNodes(t, kc, 10*time.Second, map[string]string{"srv1": "True", "wrk1": "True"})
		eventually(t, 10*time.Second, "pods of the deleted node are collected", func() error {
			if p := podsOn(t, kc, "wrk2"); len(p) > 0 {
				return fmt.Errorf("pods still bound to wrk2: %v", p)
			}
			return nil
		})
		out, err := kubectl(t, kc, "get", "node", "wrk2")
		require.Error(t, err)
		assert.Contains(t, out, `nodes "wrk2" not found`)
	})
}

func getNode(t *testing.T, kubeconfig, name string) nodeView {
	t.Helper()
	var n nodeView
	require.NoError(t, json.Unmarshal([]byte(mustKubectl(t, kubeconfig, "get", "node", name, "-o", "json")), &n))
	return n
}

func taintKeys(n nodeView) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key)
	}
	return out
}

// podsOn lists the names of the pods bound to node, through the
// fieldSelector drain uses.
func podsOn(t *testing.T, kubeconfig, node string) []string {
	t.Helper()
	out := mustKubectl(t, kubeconfig, "get", "pods", "-A", "--field-selector", "spec.nodeName="+node, "-o", "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}")
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			names = append(names, l)
		}
	}
	return names
}
