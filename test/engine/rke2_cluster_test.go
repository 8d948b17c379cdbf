package testengine_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// rke2: two servers and an agent joining through the supervisor on 9345,
// rke2's paths and files, and a cluster that keeps working, with every
// write visible on the other server, when the first server goes away.
func TestRKE2TwoServersAndAnAgentJoinOn9345(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "rke2", rke2Ver)
	ip := ips(t)
	common := "token: rke2-test-token\nkube-controller-manager-arg: [node-monitor-grace-period=6s]\nkubelet-arg: [node-status-update-frequency=1s]\n"
	s1 := newNode(t, "rke2", "s1", fmt.Sprintf("node-name: s1\nnode-ip: %[1]s\nbind-address: %[1]s\ncluster-init: true\n", ip(2))+common)
	s1.start(bin, "server")
	waitNodes(t, s1.kubeconfig(), 60*time.Second, map[string]string{"s1": "True"})
	s2 := newNode(t, "rke2", "s2", fmt.Sprintf("node-name: s2\nnode-ip: %[1]s\nbind-address: %[1]s\nserver: https://%[2]s:9345\n", ip(3), ip(2))+common)
	s2.start(bin, "server")
	a1 := newNode(t, "rke2", "a1", fmt.Sprintf("node-name: a1\nnode-ip: %s\nserver: https://%s:9345\n", ip(4), ip(2))+common)
	a1.start(bin, "agent")
	nodes := waitNodes(t, s1.kubeconfig(), 60*time.Second, map[string]string{"s1": "True", "s2": "True", "a1": "True"})

	t.Run("rke2 reads its own config and writes its own files", func(t *testing.T) {
		assert.Contains(t, s1.logText(), `level=warning msg="Unknown flag --cluster-init found in config.yaml, skipping"`, "rke2 has no cluster-init")
		for _, s := range []*node{s1, s2} {
			assert.FileExists(t, s.path("/etc/rancher/rke2/rke2.yaml"))
			assert.FileExists(t, s.path("/var/lib/rancher/rke2/server/tls/server-ca.crt"))
			assert.Equal(t, s1.readFile("/var/lib/rancher/rke2/server/tls/server-ca.crt"), s.readFile("/var/lib/rancher/rke2/server/tls/server-ca.crt"), "one cluster CA")
			assert.True(t, strings.HasPrefix(s.readFile("/var/lib/rancher/rke2/server/token"), "K10"))
		}
		assert.FileExists(t, a1.path("/var/lib/rancher/rke2/agent/etc/rke2-agent-load-balancer.json"))
		for _, name := range []string{"s1", "s2"} {
			n := nodes[name]
			assert.Equal(t, "true", n.Metadata.Labels["node-role.kubernetes.io/etcd"], "rke2 servers always run etcd")
			assert.Equal(t, "rke2", n.Metadata.Labels["node.kubernetes.io/instance-type"])
			assert.Contains(t, n.Metadata.Annotations, "rke2.io/node-args")
		}
		for _, n := range nodes {
			assert.Equal(t, rke2Ver, n.Status.NodeInfo.KubeletVersion)
		}
	})

	t.Run("the supervisor is on 9345 and the API on 6443", func(t *testing.T) {
		insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
		get := func(url string) (int, string) {
			resp, err := insecure.Get(url)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		code, body := get("https://" + ip(2) + ":9345/cacerts")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, s1.readFile("/var/lib/rancher/rke2/server/tls/server-ca.crt"), body)
		code, _ = get("https://" + ip(2) + ":6443/cacerts")
		assert.Equal(t, http.StatusUnauthorized, code, "6443 is the API alone")
	})

	t.Run("rke2's kubectl is at data-dir/bin/kubectl", func(t *testing.T) {
		kubectlPath := s2.path("/var/lib/rancher/rke2/bin/kubectl")
		target, err := filepath.EvalSymlinks(kubectlPath)
		require.NoError(t, err)
		real, err := filepath.EvalSymlinks(realKubectl(t))
		require.NoError(t, err)
		assert.Equal(t, real, target)
	})

	t.Run("a write on one server is read on the other", func(t *testing.T) {
		mustKubectl(t, s1.kubeconfig(), "label", "node", "a1", "cargoship.dev/written-on=s1")
		assert.Equal(t, "s1", mustKubectl(t, s2.kubeconfig(), "get", "node", "a1", "-o", "jsonpath={.metadata.labels.cargoship\\.dev/written-on}"))
	})

	t.Run("the cluster outlives its first server", func(t *testing.T) {
		// The agent must have learned of s2 first, as a real agent's
		// load balancer does from the apiserver endpoints.
		lb := "/var/lib/rancher/rke2/agent/etc/rke2-agent-load-balancer.json"
		eventually(t, 20*time.Second, "the agent knows both servers", func() error {
			if b := a1.readFile(lb); !strings.Contains(b, ip(3)+":6443") {
				return fmt.Errorf("%s: %s", lb, b)
			}
			return nil
		})
		s1.kill()
		kc := s2.kubeconfig()
		mustKubectl(t, kc, "label", "node", "a1", "cargoship.dev/written-on=s2", "--overwrite")
		waitNodes(t, kc, 40*time.Second, map[string]string{"s1": "Unknown", "s2": "True", "a1": "True"})
		out := mustKubectl(t, kc, "drain", "a1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
		assert.Contains(t, out, "node/a1 drained")
		mustKubectl(t, kc, "uncordon", "a1")

		// Back, s1 ignores nothing it missed: it reads the datastore again.
		s1.start(bin, "server")
		waitNodes(t, s1.kubeconfig(), 40*time.Second, map[string]string{"s1": "True", "s2": "True", "a1": "True"})
		eventually(t, 20*time.Second, "s1 catches up", func() error {
			out, err := kubectl(t, s1.kubeconfig(), "get", "node", "a1", "-o", "jsonpath={.metadata.labels.cargoship\\.dev/written-on}")
			if err != nil || out != "s2" {
				return fmt.Errorf("label on s1 is %q (%w)", out, err)
			}
			return nil
		})
	})

}
