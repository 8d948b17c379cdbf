package testengine_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// An upgrade as cargoship does it: replace the binary with a newer build
// and restart, server first, then the agent. --version and every node's
// kubeletVersion follow, and the cluster's state (a label set before)
// survives the restarts.
func TestK3sUpgradeByReplacingTheBinary(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	oldBin, newBin := engineBinary(t, "k3s", k3sOld), engineBinary(t, "k3s", k3sNew)
	ip := ips(t)
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf("node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ncluster-init: true\ntoken: tok\nkubelet-arg: [node-status-update-frequency=1s]\n", ip(2)))
	srv.start(oldBin, "server")
	kc := srv.kubeconfig()
	waitNodes(t, kc, 60*time.Second, map[string]string{"srv1": "True"})
	agent := newNode(t, "k3s", "wrk1", fmt.Sprintf("server: https://%s:6443\ntoken: tok\nnode-name: wrk1\nnode-ip: %s\nkubelet-arg: [node-status-update-frequency=1s]\n", ip(2), ip(3)))
	agent.start(oldBin, "agent")
	waitNodes(t, kc, 30*time.Second, map[string]string{"srv1": "True", "wrk1": "True"})
	mustKubectl(t, kc, "label", "node", "wrk1", "cargoship.dev/before-upgrade=yes")
	mustKubectl(t, kc, "cordon", "wrk1")
	token := srv.readFile("/var/lib/rancher/k3s/server/token")

	// versions may fail while a restarted server is not listening yet;
	// the waits below retry it, the checks between them may not.
	versions := func() (map[string]string, error) {
		nodes, err := getNodes(t, kc)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for name, n := range nodes {
			out[name] = n.Status.NodeInfo.KubeletVersion
		}
		return out, nil
	}
	mustVersions := func() map[string]string {
		v, err := versions()
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, map[string]string{"srv1": k3sOld, "wrk1": k3sOld}, mustVersions())

	srv.stop()
	srv.start(newBin, "server")
	eventually(t, 60*time.Second, "the server reports the new version", func() error {
		v, err := versions()
		if err != nil {
			return err
		}
		if v["srv1"] != k3sNew {
			return fmt.Errorf("srv1 kubeletVersion %s", v["srv1"])
		}
		return nil
	})
	assert.Equal(t, k3sOld, mustVersions()["wrk1"], "the agent is not upgraded yet")
	agent.stop()
	agent.start(newBin, "agent")
	eventually(t, 30*time.Second, "the agent reports the new version", func() error {
		v, err := versions()
		if err != nil {
			return err
		}
		if v["wrk1"] != k3sNew {
			return fmt.Errorf("wrk1 kubeletVersion %s", v["wrk1"])
		}
		return nil
	})

	wrk1 := getNode(t, kc, "wrk1")
	assert.Equal(t, "yes", wrk1.Metadata.Labels["cargoship.dev/before-upgrade"], "state survived the restarts")
	assert.True(t, wrk1.Spec.Unschedulable, "a restart keeps the node cordoned; cargoship uncordons")
	assert.Equal(t, token, srv.readFile("/var/lib/rancher/k3s/server/token"), "the token is kept")
	assert.Regexp(t, `(?m)^wrk1\s+Ready,SchedulingDisabled\s+<none>\s+\S+\s+v1\.35\.4\+k3s1$`, mustKubectl(t, kc, "get", "nodes"))

	out, err := exec.Command(newBin, "--version").Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), "k3s version "+k3sNew+" "), string(out))
}

// A server restarted with a different token refuses to start, as k3s does
// when its bootstrap data was encrypted with the old one.
func TestK3sServerRefusesAChangedToken(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "k3s", k3sOld)
	ip := ips(t)
	cfg := "node-name: srv1\nnode-ip: %[1]s\nbind-address: %[1]s\ntoken: %[2]s\n"
	srv := newNode(t, "k3s", "srv1", fmt.Sprintf(cfg, ip(2), "first"))
	srv.start(bin, "server")
	waitNodes(t, srv.kubeconfig(), 60*time.Second, map[string]string{"srv1": "True"})
	srv.stop()
	srv.writeFile("/etc/rancher/k3s/config.yaml", fmt.Sprintf(cfg, ip(2), "second"), 0o600)
	srv.start(bin, "server")
	eventually(t, 20*time.Second, "the server exits", func() error {
		if srv.running() {
			return fmt.Errorf("still running")
		}
		return nil
	})
	assert.Contains(t, srv.logText(), `level=fatal msg="Error: starting kubernetes: preparing server: failed to bootstrap cluster data: bootstrap data already found and encrypted with different token"`)
}
