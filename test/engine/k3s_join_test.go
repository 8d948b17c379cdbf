package testengine_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// An agent whose token names another cluster's CA, or carries the wrong
// password, is refused, logs what the real agent logs, keeps retrying (the
// unit stays activating), and never appears as a node.
func TestK3sAgentWithAWrongTokenIsRejected(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: right-password\n", ip(2)))
	srv.start(bin, "server")
	waitNodes(t, srv.kubeconfig(), 60*time.Second, map[string]string{"srv1": "True"})
	good := strings.TrimSpace(srv.readFile("/var/lib/rancher/k3s/server/token"))
	hash := strings.TrimSuffix(strings.TrimPrefix(good, "K10"), "::server:right-password")

	otherCA := "K10" + strings.Repeat("ab", 32) + "::server:right-password"
	wrongHash := newNode(t, "k3s", "wrong-ca", fmt.Sprintf("server: https://%s:6443\ntoken: %s\nnode-name: wrong-ca\nnode-ip: %s\n", ip(2), otherCA, ip(3)))
	wrongHash.start(bin, "agent")
	wrongPass := newNode(t, "k3s", "wrong-pass", fmt.Sprintf("server: https://%s:6443\ntoken: K10%s::server:not-it\nnode-name: wrong-pass\nnode-ip: %s\n", ip(2), hash, ip(4)))
	wrongPass.start(bin, "agent")

	mismatch := regexp.MustCompile(`level=error msg="Failed to validate connection to cluster at https://` + regexp.QuoteMeta(ip(2)) +
		`:6443: token CA hash does not match the Cluster CA certificate hash: ` + strings.Repeat("ab", 32) + ` != ` + hash + `"`)
	eventually(t, 20*time.Second, "the wrong-CA agent retries", func() error {
		if n := len(mismatch.FindAllString(wrongHash.logText(), -1)); n < 2 {
			return fmt.Errorf("%d CA hash mismatch lines, want at least 2", n)
		}
		return nil
	})
	eventually(t, 20*time.Second, "the wrong-password agent retries", func() error {
		if n := strings.Count(wrongPass.logText(), "token is not valid"); n < 2 {
			return fmt.Errorf("%d rejections, want at least 2", n)
		}
		return nil
	})
	assert.Contains(t, wrongPass.logText(), "401 Unauthorized")
	assert.Contains(t, srv.logText(), "invalid username/password combination", "the server logs the refused password")
	assert.True(t, wrongHash.running(), "the agent keeps running and retrying")
	assert.True(t, wrongPass.running(), "the agent keeps running and retrying")
	assert.NotContains(t, wrongHash.logText(), "up and running")

	nodes, err := getNodes(t, srv.kubeconfig())
	require.NoError(t, err)
	assert.Len(t, nodes, 1, "no rejected agent registered a node")
}

// A host that takes a node name already in the cluster, with a different
// /etc/rancher/node/password, is refused until the node is deleted, as the
// engines refuse it; deleting the node lets the new host join.
func TestK3sNodeNameTakenByAnotherHostIsRejectedUntilDeleted(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: tok\nkube-controller-manager-arg: [node-monitor-grace-period=5s]\n", ip(2)))
	srv.start(bin, "server")
	kc := srv.kubeconfig()
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})
	cfg := fmt.Sprintf("server: https://%s:6443\ntoken: tok\nnode-name: wrk1\nnode-ip: %s\n", ip(2), ip(3))
	first := newNode(t, "k3s", "wrk1", cfg)
	first.start(bin, "agent")
	waitNodes(t, kc, 30*time.Second, map[string]string{"srv1": "True", "wrk1": "True"})
	first.kill()

	// A rebuilt host: same name, no /etc/rancher/node/password yet.
	second := newNode(t, "k3s", "wrk1-rebuilt", cfg)
	second.start(bin, "agent")
	eventually(t, 20*time.Second, "the rebuilt host is refused", func() error {
		if !strings.Contains(second.logText(), "Waiting to retrieve agent configuration; server is not ready: ") ||
			!strings.Contains(second.logText(), "Node password rejected, duplicate hostname") {
			return fmt.Errorf("no node password rejection logged yet")
		}
		return nil
	})
	mustKubectl(t, kc, "delete", "node", "wrk1")
	waitNodes(t, kc, 30*time.Second, map[string]string{"srv1": "True", "wrk1": "True"})
	assert.Contains(t, second.logText(), "k3s agent is up and running")
}

// A second k3s server joins through 6443 (where k3s serves the
// supervisor) with the first one's token file, runs etcd like it, and
// shares its CA and token.
func TestK3sSecondServerJoinsOn6443(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	s1 := newNode(t, "k3s", "s1", fmt.Sprintf("node-name: s1\nnode-ip: %[1]s\nbind-address: %[1]s\ncluster-init: true\ntoken: tok\n", ip(2)))
	s1.start(bin, "server")
	waitNodes(t, s1.kubeconfig(), 60*time.Second, map[string]string{"s1": "True"})
	token := strings.TrimSpace(s1.readFile("/var/lib/rancher/k3s/server/token"))
	s2 := newNode(t, "k3s", "s2", fmt.Sprintf("node-name: s2\nnode-ip: %[1]s\nbind-address: %[1]s\nserver: https://%[2]s:6443\ntoken: %[3]s\n", ip(3), ip(2), token))
	s2.start(bin, "server")
	for _, s := range []*node{s1, s2} {
		nodes := waitNodes(t, s.kubeconfig(), 60*time.Second, map[string]string{"s1": "True", "s2": "True"})
		assert.Equal(t, "true", nodes["s2"].Metadata.Labels["node-role.kubernetes.io/etcd"], "a joined k3s server runs etcd")
	}
	assert.Equal(t, token, strings.TrimSpace(s2.readFile("/var/lib/rancher/k3s/server/token")))
	assert.Contains(t, s2.readFile("/etc/rancher/k3s/k3s.yaml"), "server: https://"+ip(3)+":6443")
	assert.Contains(t, s2.logText(), "Joined the cluster at https://"+ip(2)+":6443")
}
