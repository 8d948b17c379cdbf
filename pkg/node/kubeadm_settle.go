package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/engine"
)

// How a kubeadm controller's control plane is waited for after a step that
// restarts its static pods or its kubelet: sampled every settlePoll, it
// must look the same and whole settleSamples times in a row, within
// settleTimeout (docs/reference/engines.md 7.1).
var (
	settlePoll    = 5 * time.Second // Fleet.SettlePoll, when set
	settleTimeout = 8 * time.Minute
)

const settleSamples = 3

// The annotations the kubelet puts on a static pod (its hash, and where it
// came from) and on the mirror pod it writes for it in the API.
const (
	annotationConfigSource = "kubernetes.io/config.source"
	annotationConfigHash   = "kubernetes.io/config.hash"
	annotationConfigMirror = "kubernetes.io/config.mirror"
)

// waitControlPlaneSettled waits until h's control plane is back for good
// after kubeadm upgrade or a kubelet restart. A restarted kubelet whose
// defaults changed recreates every static pod some seconds after it
// reports Ready, and an API server that has just started refuses even the
// admin ("forbidden") until its RBAC is served: moving on earlier fails
// the next call (issue seen on real Kubernetes: a phase's first kubectl
// answered Forbidden). Settled is, through h's own API server:
//   - the kubelet has read every manifest in its static pod directory;
//   - each of those pods' mirror in the API is of the kubelet's current
//     spec (its hash), and every container of it runs and is ready;
//   - /readyz passes, every check of it;
//
// and all of that unchanged (the same containers, no restart) over
// settleSamples samples settlePoll apart.
func (s *Fleet) waitControlPlaneSettled(ctx context.Context, h *Host, u engine.KubeadmUpgrader) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	poll := settlePoll
	if s.SettlePoll > 0 {
		poll = s.SettlePoll
	}
	var (
		last   string
		streak int
		why    = errors.New("not sampled yet")
		start  = time.Now()
	)
	for {
		sig, err := s.sampleControlPlane(ctx, h, u)
		switch {
		case err != nil:
			why, streak = err, 0
		case sig == last:
			streak++
		default:
			last, streak = sig, 1
		}
		if streak >= settleSamples {
			s.Logger().Info("control plane settled", "host", h.String(), "after", time.Since(start).Round(time.Second))
			return nil
		}
		select {
		case <-ctx.Done():
			if ctxErr := context.Cause(ctx); !errors.Is(ctxErr, context.DeadlineExceeded) {
				return ctxErr
			}
			if streak > 0 {
				why = fmt.Errorf("still changing: its containers were %s", last)
			}
			return fmt.Errorf("%s: the control plane did not settle in %s: %w", h, settleTimeout, why)
		case <-time.After(poll):
		}
	}
}

// sampleControlPlane reads h's control plane once: its signature (each
// static pod's containers and restarts) when it is whole, else why not.
func (s *Fleet) sampleControlPlane(ctx context.Context, h *Host, u engine.KubeadmUpgrader) (string, error) {
	server := "--server=" + ownAPIServer(h, s.Engine.APIPort())
	manifests, err := h.Conn.Sudo(ctx, u.StaticPodManifestsCommand())
	if err != nil {
		return "", fmt.Errorf("listing the static pod manifests: %w", err)
	}
	node := h.NodeName()
	kubelet, err := h.Conn.Sudo(ctx, s.Engine.Kubectl(server, "--request-timeout=20s", "get", "--raw=/api/v1/nodes/"+node+"/proxy/pods"))
	if err != nil {
		return "", fmt.Errorf("asking the kubelet for its pods: %w", err)
	}
	mirrors, err := h.Conn.Sudo(ctx, s.Engine.Kubectl(server, "--request-timeout=20s", "get", "pods", "-n", "kube-system",
		"--field-selector=spec.nodeName="+node, "-o", "json"))
	if err != nil {
		return "", fmt.Errorf("listing the control plane's pods: %w", err)
	}
	sig, err := controlPlaneSignature(manifests, kubelet, mirrors)
	if err != nil {
		return "", err
	}
	ready, err := h.Conn.Sudo(ctx, s.Engine.Kubectl(server, "--request-timeout=20s", "get", "--raw=/readyz"))
	if err != nil {
		return "", fmt.Errorf("/readyz: %w", err)
	}
	if strings.TrimSpace(ready) != "ok" {
		return "", fmt.Errorf("/readyz answered %q", strings.TrimSpace(ready))
	}
	return sig, nil
}

// ownAPIServer is the URL of the API server on h itself: the one whose
// static pod was restarted, not a VIP or another controller.
func ownAPIServer(h *Host, port int) string {
	return engine.ServerURL(h.EffectiveSpec().PrivateAddress, port)
}

// podList is what is read of a `kubectl get pods -o json` or the kubelet's
// /pods.
type podList struct {
	Items []struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Status struct {
			ContainerStatuses []struct {
				Name         string `json:"name"`
				Ready        bool   `json:"ready"`
				RestartCount int    `json:"restartCount"`
				ContainerID  string `json:"containerID"`
				State        struct {
					Running *struct{} `json:"running"`
				} `json:"state"`
			} `json:"containerStatuses"`
		} `json:"status"`
	} `json:"items"`
}

// controlPlaneSignature compares the kubelet's static pods (kubeletPods,
// its /pods) with their mirrors in the API (mirrorPods) for the manifests
// listed: an error says what is not there yet; the signature names every
// container and its restarts, so two equal ones mean nothing restarted.
func controlPlaneSignature(manifests, kubeletPods, mirrorPods string) (string, error) {
	want := len(strings.Fields(manifests))
	var kl, api podList
	if err := json.Unmarshal([]byte(kubeletPods), &kl); err != nil {
		return "", fmt.Errorf("reading the kubelet's pods: %w", err)
	}
	if err := json.Unmarshal([]byte(mirrorPods), &api); err != nil {
		return "", fmt.Errorf("reading the control plane's pods: %w", err)
	}
	hashes := map[string]string{}
	for _, p := range kl.Items {
		if p.Metadata.Annotations[annotationConfigSource] == "file" {
			hashes[p.Metadata.Name] = p.Metadata.Annotations[annotationConfigHash]
		}
	}
	if len(hashes) < want {
		return "", fmt.Errorf("the kubelet has read %d of its %d static pod manifests", len(hashes), want)
	}
	names := make([]string, 0, len(hashes))
	for n := range hashes {
		names = append(names, n)
	}
	sort.Strings(names)
	var sig []string
	for _, name := range names {
		found := false
		for _, p := range api.Items {
			if p.Metadata.Name != name {
				continue
			}
			found = true
			if got := p.Metadata.Annotations[annotationConfigMirror]; got != hashes[name] {
				return "", fmt.Errorf("%s in the API mirrors spec %.12s, the kubelet runs %.12s", name, got, hashes[name])
			}
			if len(p.Status.ContainerStatuses) == 0 {
				return "", fmt.Errorf("%s reports no containers yet", name)
			}
			for _, c := range p.Status.ContainerStatuses {
				if c.State.Running == nil || !c.Ready {
					return "", fmt.Errorf("%s: container %s is not running and ready", name, c.Name)
				}
				id := c.ContainerID
				if i := strings.Index(id, "://"); i >= 0 {
					id = id[i+3:]
				}
				sig = append(sig, fmt.Sprintf("%s/%s=%.12s#%d", name, c.Name, id, c.RestartCount))
			}
		}
		if !found {
			return "", fmt.Errorf("%s has no mirror pod in the API yet", name)
		}
	}
	return strings.Join(sig, " "), nil
}
