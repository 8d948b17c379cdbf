package testengine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// node-label and node-taint apply when a node registers, not when it
// restarts (docs/reference/engines.md 3.4): an agent restarted with new
// ones keeps what it registered with. kubectl label, taint and annotate,
// the calls cargoship's phase 29 makes, change them, and what they set
// survives the next restart.
func TestK3sNodeLabelsAndTaintsApplyAtRegistrationOnly(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: tok\nkubelet-arg: [node-status-update-frequency=1s]\n", ip(2)))
	srv.start(bin, "server")
	kc := srv.kubeconfig()
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})

	agentCfg := func(labels, taints string) string {
		return fmt.Sprintf("server: https://%s:6443\ntoken: tok\nnode-name: wrk1\nnode-ip: %s\nkubelet-arg: [node-status-update-frequency=1s]\nnode-label: %s\nnode-taint: %s\n",
			ip(2), ip(3), labels, taints)
	}
	agent := newNode(t, "k3s", "wrk1", agentCfg("[zone=a, tier=web]", "[dedicated=edge:NoSchedule]"))
	agent.start(bin, "agent")
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True", "wrk1": "True"})

	taints := func() []string {
		var out []string
		for _, tt := range getNode(t, kc, "wrk1").Spec.Taints {
			out = append(out, tt.Key+"="+tt.Value+":"+tt.Effect)
		}
		return out
	}
	wrk1 := getNode(t, kc, "wrk1")
	assert.Equal(t, "a", wrk1.Metadata.Labels["zone"])
	assert.Equal(t, "web", wrk1.Metadata.Labels["tier"])
	assert.Equal(t, []string{"dedicated=edge:NoSchedule"}, taints())

	// restart re-runs the agent with config and waits until it has
	// registered once more.
	restart := func(config string) {
		t.Helper()
		registered := strings.Count(agent.logText(), "Successfully registered node wrk1")
		agent.stop()
		agent.writeFile("/etc/rancher/k3s/config.yaml", config, 0o600)
		agent.start(bin, "agent")
		eventually(t, 60*time.Second, "wrk1 registers again", func() error {
			if n := strings.Count(agent.logText(), "Successfully registered node wrk1"); n <= registered {
				return fmt.Errorf("registered %d times", n)
			}
			return nil
		})
	}
	restart(agentCfg("[zone=b]", "[]"))
	wrk1 = getNode(t, kc, "wrk1")
	assert.Equal(t, "a", wrk1.Metadata.Labels["zone"], "a restart does not change a registered node's labels")
	assert.Equal(t, "web", wrk1.Metadata.Labels["tier"], "nor remove them")
	assert.Equal(t, []string{"dedicated=edge:NoSchedule"}, taints(), "nor its taints")
	assert.Equal(t, "wrk1", wrk1.Metadata.Labels["kubernetes.io/hostname"], "the well-known labels are kept")

	// Through the API instead, as cargoship's phase 29 does it.
	assert.Equal(t, "node/wrk1 labeled\n", mustKubectl(t, kc, "label", "node", "wrk1", "--overwrite", "zone=b", "tier-"))
	assert.Equal(t, "node/wrk1 modified\n", mustKubectl(t, kc, "taint", "node", "wrk1", "--overwrite", "pool=gpu:PreferNoSchedule", "dedicated:NoSchedule-"))
	assert.Equal(t, "node/wrk1 annotated\n", mustKubectl(t, kc, "annotate", "node", "wrk1", "--overwrite", "cargoship.colonel-byte.dev/labels=zone"))
	_, err := kubectl(t, kc, "taint", "node", "wrk1", "dedicated:NoSchedule-")
	require.Error(t, err, "removing a taint the node does not have fails, as kubectl's does")

	restart(agentCfg("[zone=b]", "[]"))
	wrk1 = getNode(t, kc, "wrk1")
	assert.Equal(t, "b", wrk1.Metadata.Labels["zone"])
	assert.NotContains(t, wrk1.Metadata.Labels, "tier")
	assert.Equal(t, []string{"pool=gpu:PreferNoSchedule"}, taints(), "what the API set survives a restart")
	assert.Equal(t, "zone", wrk1.Metadata.Annotations["cargoship.colonel-byte.dev/labels"], "annotations others set survive the engine's own")
}
