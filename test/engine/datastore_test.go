package testengine_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// Three servers share one datastore that behaves as the engines' embedded
// etcd does: a write accepted by any server is never lost to a concurrent
// write on another, an update with a stale resourceVersion gets 409
// Conflict wherever it is sent, and the cluster keeps both guarantees when
// the server that founded it goes away and when it comes back.
func TestThreeServersShareOneLinearizableDatastore(t *testing.T) {
	testtier.Slow(t, "builds the test engine and runs engine processes on loopback addresses")
	bin := engineBinary(t, "rke2", rke2Ver)
	ip := ips(t)
	common := "token: rke2-test-token\n"
	s1 := newNode(t, "rke2", "s1", fmt.Sprintf("node-name: s1\nnode-ip: %[1]s\nbind-address: %[1]s\n", ip(2))+common)
	s1.start(bin, "server")
	waitNodes(t, s1.kubeconfig(), 60*time.Second, map[string]string{"s1": "True"})
	s2 := newNode(t, "rke2", "s2", fmt.Sprintf("node-name: s2\nnode-ip: %[1]s\nbind-address: %[1]s\nserver: https://%[2]s:9345\n", ip(3), ip(2))+common)
	s2.start(bin, "server")
	s3 := newNode(t, "rke2", "s3", fmt.Sprintf("node-name: s3\nnode-ip: %[1]s\nbind-address: %[1]s\nserver: https://%[2]s:9345\n", ip(4), ip(2))+common)
	s3.start(bin, "server")
	all := map[string]string{"s1": "True", "s2": "True", "s3": "True"}
	for _, s := range []*node{s1, s2, s3} {
		waitNodes(t, s.kubeconfig(), 60*time.Second, all)
	}
	c1, c2, c3 := newAPIClient(t, s1.kubeconfig()), newAPIClient(t, s2.kubeconfig()), newAPIClient(t, s3.kubeconfig())

	t.Run("an uncordon and a status update sent at once through two servers both survive", func(t *testing.T) {
		uncordonWhileStatusChanges(t, c1, c2, c3, "s3")
	})
	t.Run("of two updates from one resourceVersion sent at once through two servers, one wins and one gets 409", func(t *testing.T) {
		oneOfTwoStaleUpdatesConflicts(t, c1, c2, c3)
	})

	t.Run("without the founder the other servers go on with both guarantees", func(t *testing.T) {
		s1.stop()
		uncordonWhileStatusChanges(t, c2, c3, c2, "s3")
		oneOfTwoStaleUpdatesConflicts(t, c3, c2, c3)
	})

	t.Run("the founder, back, catches up and writes through the cluster", func(t *testing.T) {
		mustKubectl(t, s2.kubeconfig(), "label", "node", "s2", "cargoship.dev/while-s1-was-away=yes")
		s1.start(bin, "server")
		waitNodes(t, s1.kubeconfig(), 60*time.Second, all)
		assert.Equal(t, "yes", mustKubectl(t, s1.kubeconfig(), "get", "node", "s2", "-o", "jsonpath={.metadata.labels.cargoship\\.dev/while-s1-was-away}"))
		uncordonWhileStatusChanges(t, c1, c3, c2, "s2")
		oneOfTwoStaleUpdatesConflicts(t, c1, c2, c3)
	})
}

// uncordonWhileStatusChanges cordons node through a, then, round after
// round, uncordons it through a while a status update is sent through b
// at the same instant, and reads through r that both took effect. A
// datastore that resolves the two writes by keeping one loses one of them.
func uncordonWhileStatusChanges(t *testing.T, a, b, r *apiClient, node string) {
	t.Helper()
	const rounds = 15
	path := "/api/v1/nodes/" + node
	for round := range rounds {
		code, out := a.mustDo(t, http.MethodPatch, path, "application/merge-patch+json", map[string]any{"spec": map[string]any{"unschedulable": true}})
		require.Equal(t, http.StatusOK, code, "cordon: %v", out)

		var wg sync.WaitGroup
		start := make(chan struct{})
		codes := make([]int, 2)
		errs := make([]error, 2)
		send := func(i int, c *apiClient, p string, body map[string]any) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes[i], _, errs[i] = c.do(http.MethodPatch, p, "application/merge-patch+json", body)
			}()
		}
		send(0, a, path, map[string]any{"spec": map[string]any{"unschedulable": false}})
		send(1, b, path+"/status", map[string]any{"status": map[string]any{"capacity": map[string]any{"cargoship.dev/round": fmt.Sprint(round)}}})
		close(start)
		wg.Wait()
		for i := range codes {
			require.NoError(t, errs[i])
			require.Equal(t, http.StatusOK, codes[i], "round %d, write %d", round, i)
		}

		// Every server has a write before it is answered, so the third
		// server reads both at once; a short wait spares a slow machine.
		eventually(t, 5*time.Second, fmt.Sprintf("round %d: both writes on %s", round, node), func() error {
			code, n, err := r.do(http.MethodGet, path, "", nil)
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("get: %d %w", code, err)
			}
			spec, _ := n["spec"].(map[string]any)
			status, _ := n["status"].(map[string]any)
			capacity, _ := status["capacity"].(map[string]any)
			if spec["unschedulable"] == true {
				return fmt.Errorf("the uncordon was lost: spec %v", spec)
			}
			if capacity["cargoship.dev/round"] != fmt.Sprint(round) {
				return fmt.Errorf("the status update was lost: capacity %v", capacity)
			}
			return nil
		})
	}
}

// oneOfTwoStaleUpdatesConflicts reads a secret through a, then, round after
// round, PUTs it back with the same resourceVersion through a and b at the
// same instant: the API must take one and answer 409 Conflict to the
// other, and r must read the one it took. A lone PUT with the
// resourceVersion both started from then gets 409 too.
func oneOfTwoStaleUpdatesConflicts(t *testing.T, a, b, r *apiClient) {
	t.Helper()
	const rounds = 10
	path := "/api/v1/namespaces/default/secrets/linearizable"
	code, _ := a.mustDo(t, http.MethodGet, path, "", nil)
	if code == http.StatusNotFound {
		code, out := a.mustDo(t, http.MethodPost, "/api/v1/namespaces/default/secrets", "application/json",
			map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "linearizable"}})
		require.Equal(t, http.StatusCreated, code, "create: %v", out)
	}
	var stale map[string]any
	for round := range rounds {
		code, cur := a.mustDo(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, code)
		stale = cur

		var wg sync.WaitGroup
		start := make(chan struct{})
		codes := make([]int, 2)
		answers := make([]map[string]any, 2)
		errs := make([]error, 2)
		for i, c := range []*apiClient{a, b} {
			obj := copyJSON(t, cur)
			obj["data"] = map[string]any{"writer": b64(fmt.Sprintf("%d-%d", round, i))}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				codes[i], answers[i], errs[i] = c.do(http.MethodPut, path, "application/json", obj)
			}()
		}
		close(start)
		wg.Wait()
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		require.ElementsMatch(t, []int{http.StatusOK, http.StatusConflict}, codes, "round %d: %v", round, answers)
		winner := 0
		if codes[1] == http.StatusOK {
			winner = 1
		}
		assert.Equal(t, "Conflict", answers[1-winner]["reason"], "round %d", round)

		code, got := r.mustDo(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, code)
		data, _ := got["data"].(map[string]any)
		require.Equal(t, b64(fmt.Sprintf("%d-%d", round, winner)), data["writer"], "round %d: the write that was answered 200 is the one kept", round)
	}
	stale["data"] = map[string]any{"writer": b64("stale")}
	code, out := r.mustDo(t, http.MethodPut, path, "application/json", stale)
	assert.Equal(t, http.StatusConflict, code, "a PUT with an old resourceVersion: %v", out)
}

// b64 is a secret's data value.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// copyJSON is a deep copy of a decoded object, one per concurrent writer.
func copyJSON(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
