package upstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The workload: a probe serving HTTP on one node and a probe on another
// that resolves the API's Service name through CoreDNS and fetches from
// the first across the pod network. Both pods are pinned by nodeName, and
// tolerate every taint (the server may be on the control plane).
const workloadNamespace = "cargoship-e2e"

func probePod(name, nodeName string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels: {app: %s}
spec:
  nodeName: %s
  restartPolicy: Never
  tolerations: [{operator: Exists}]
  containers:
    - name: probe
      image: %s
      imagePullPolicy: Never
      args: [%s]
`, name, workloadNamespace, name, nodeName, probeImage, strings.Join(quoted, ", "))
}

// podState is what the walk reads of a pod.
type podState struct {
	Phase, IP, Node string
}

func (w *world) pod(name string) (podState, error) {
	out, err := w.tryKubectl("", "-n", workloadNamespace, "get", "pod", name, "-o", "json")
	if err != nil {
		return podState{}, err
	}
	var p struct {
		Spec   struct{ NodeName string }
		Status struct {
			Phase string
			PodIP string
		}
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return podState{}, err
	}
	return podState{Phase: p.Status.Phase, IP: p.Status.PodIP, Node: p.Spec.NodeName}, nil
}

// crossNodeProbe runs the workload between two nodes and returns the
// checking pod's log.
func (w *world) crossNodeProbe(serverNode, clientNode, tag string) string {
	w.t.Helper()
	server, client := "probe-serve-"+tag, "probe-check-"+tag
	w.kubectl("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+workloadNamespace+"}\n", "apply", "-f", "-")
	w.kubectl(probePod(server, serverNode, "serve"), "apply", "-f", "-")
	var ip string
	w.eventually("the probe server Running on "+serverNode, 3*time.Minute, func() string {
		p, err := w.pod(server)
		if err != nil {
			return err.Error()
		}
		ip = p.IP
		if p.Phase != "Running" || ip == "" {
			return fmt.Sprintf("phase %q, IP %q", p.Phase, ip)
		}
		return ""
	})
	w.kubectl(probePod(client, clientNode, "check",
		"-lookup", "kubernetes.default.svc.cluster.local",
		"-get", "http://"+ip+":8080/"), "apply", "-f", "-")
	var phase string
	w.eventually("the probe check finished on "+clientNode, 3*time.Minute, func() string {
		p, err := w.pod(client)
		if err != nil {
			return err.Error()
		}
		if phase = p.Phase; phase != "Succeeded" && phase != "Failed" {
			return "phase " + phase
		}
		return ""
	})
	log, _ := w.tryKubectl("", "-n", workloadNamespace, "logs", client)
	if phase != "Succeeded" {
		w.t.Fatalf("the probe on %s failed:\n%s", clientNode, log)
	}
	w.kubectl("", "-n", workloadNamespace, "delete", "pod", server, client, "--wait=false")
	return log
}
