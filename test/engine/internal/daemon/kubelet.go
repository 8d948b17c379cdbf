package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// kubelet registers this host's Node and keeps it Ready by posting status,
// as a kubelet does; it stops when the engine stops, and the node lifecycle
// controller then marks the node NotReady.
type kubelet struct {
	spec     nodeSpec
	client   *http.Client
	interval time.Duration

	mu   sync.Mutex
	apis []string // apiserver host:port, the current one first
}

var errNotFound = errors.New("not found")

// call sends a JSON request to the current apiserver, moving to the next
// one when it cannot be reached (the agent's client-side load balancing).
func (k *kubelet) call(ctx context.Context, method, path, contentType string, body any, out any) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	k.mu.Lock()
	apis := append([]string(nil), k.apis...)
	k.mu.Unlock()
	var lastErr error
	for i, api := range apis {
		req, err := http.NewRequestWithContext(ctx, method, "https://"+api+path, bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", "application/json")
		resp, err := k.client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		if i > 0 {
			k.mu.Lock()
			k.apis = append(append([]string{api}, apis[:i]...), apis[i+1:]...)
			k.mu.Unlock()
		}
		return decode(resp, out)
	}
	if lastErr == nil {
		lastErr = errors.New("no apiserver known")
	}
	return lastErr
}

func decode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return errNotFound
	case resp.StatusCode/100 != 2:
		var st kube.Status
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			return fmt.Errorf("%s (%d)", st.Message, resp.StatusCode)
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	case out != nil:
		return json.Unmarshal(body, out)
	}
	return nil
}

// register creates the Node with node-label and node-taint, or, when it
// exists (a restart, an upgrade), brings its well-known and role labels,
// annotations and status up to date and leaves node-label and node-taint
// alone: the engines apply those at registration only
// (docs/reference/engines.md 3.4).
func (k *kubelet) register(ctx context.Context) (kube.Object, error) {
	obj, err := k.spec.object()
	if err != nil {
		return nil, err
	}
	name := k.spec.id.name
	logx.Infof("Attempting to register node %s", name)
	var out kube.Object
	err = k.call(ctx, http.MethodPost, "/api/v1/nodes", "application/json", obj, &out)
	if err != nil && strings.Contains(err.Error(), "already exists") {
		meta := map[string]any{"metadata": map[string]any{"labels": k.spec.baseLabels(), "annotations": obj["metadata"].(map[string]any)["annotations"]}}
		if err = k.call(ctx, http.MethodPatch, "/api/v1/nodes/"+name, "application/strategic-merge-patch+json", meta, nil); err == nil {
			out, err = k.postStatus(ctx, "")
		}
	}
	if err != nil {
		return nil, err
	}
	logx.Infof("Successfully registered node %s", name)
	return out, nil
}

// postStatus patches the node's status with a fresh heartbeat.
// prevReady is the Ready status the node had, to keep lastTransitionTime.
// It is a patch of the status subresource, never a PUT of the node: the
// apiserver applies it to the leader's current record and retries on a
// conflict, so what others wrote meanwhile (an uncordon, a label) stays.
func (k *kubelet) postStatus(ctx context.Context, prevReady string) (kube.Object, error) {
	transition := store.Now()
	st := k.spec.status(transition)
	if prevReady == "True" {
		for i := range st.Conditions {
			st.Conditions[i].LastTransitionTime = ""
		}
	}
	var out kube.Object
	err := k.call(ctx, http.MethodPatch, "/api/v1/nodes/"+k.spec.id.name+"/status",
		"application/strategic-merge-patch+json", map[string]any{"status": st}, &out)
	return out, err
}

func readyStatus(o kube.Object) string {
	conds, _ := kube.Get(o, "status.conditions").([]any)
	for _, c := range conds {
		if cm, ok := c.(map[string]any); ok && cm["type"] == "Ready" {
			s, _ := cm["status"].(string)
			return s
		}
	}
	return ""
}

// run registers the node, calls ready once it is registered, and posts
// status every interval; a node deleted under it is registered again, as
// a running kubelet does.
func (k *kubelet) run(ctx context.Context, ready func()) {
	var node kube.Object
	for node == nil {
		var err error
		if node, err = k.register(ctx); err != nil {
			logx.Errorf("Unable to register node %s with API server: %v", k.spec.id.name, err)
			if !sleep(ctx, 2*time.Second) {
				return
			}
		}
	}
	ready()
	prev := readyStatus(node)
	for sleep(ctx, k.interval) {
		out, err := k.postStatus(ctx, prev)
		switch {
		case errors.Is(err, errNotFound):
			logx.Warnf("Node %s was deleted from the cluster; registering it again", k.spec.id.name)
			if out, err = k.register(ctx); err != nil {
				logx.Errorf("Unable to register node %s with API server: %v", k.spec.id.name, err)
				continue
			}
		case err != nil:
			logx.Errorf("Error updating node status, will retry: %v", err)
			continue
		}
		prev = readyStatus(out)
	}
}

// sleep waits d or until ctx ends, reporting whether to go on.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
