package apiserver

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// wantsTable reports whether the client asked for server-side printing
// (kubectl's human-readable output sends as=Table first in Accept).
func wantsTable(accept string) bool { return strings.Contains(accept, "as=Table") }

type column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int    `json:"priority"`
}

func col(name string, priority int) column {
	c := column{Name: name, Type: "string", Priority: priority, Description: name}
	if name == "Name" {
		c.Format = "name"
	}
	return c
}

// columns are the kubectl get columns of each resource (wide ones at
// priority 1), as the apiserver's printers define them.
var columns = map[string][]column{
	"nodes": {col("Name", 0), col("Status", 0), col("Roles", 0), col("Age", 0), col("Version", 0),
		col("Internal-IP", 1), col("External-IP", 1), col("OS-Image", 1), col("Kernel-Version", 1), col("Container-Runtime", 1)},
	"pods": {col("Name", 0), col("Ready", 0), col("Status", 0), col("Restarts", 0), col("Age", 0),
		col("IP", 1), col("Node", 1), col("Nominated Node", 1), col("Readiness Gates", 1)},
}

// table is meta/v1 Table for objects; includeObject is the request's
// includeObject parameter (Metadata by default).
func table(resourceName string, objs []kube.Object, rv, includeObject string) map[string]any {
	cols, ok := columns[resourceName]
	if !ok {
		cols = []column{col("Name", 0), col("Age", 0)}
	}
	rows := make([]any, 0, len(objs))
	for _, o := range objs {
		var cells []any
		switch resourceName {
		case "nodes":
			cells = nodeCells(o)
		case "pods":
			cells = podCells(o)
		default:
			cells = []any{kube.Str(o, "metadata.name"), age(o)}
		}
		row := map[string]any{"cells": cells}
		switch includeObject {
		case "None":
		case "Object":
			row["object"] = o
		default:
			row["object"] = map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}
		}
		rows = append(rows, row)
	}
	return map[string]any{
		"kind": "Table", "apiVersion": "meta.k8s.io/v1",
		"metadata":          map[string]any{"resourceVersion": rv},
		"columnDefinitions": cols, "rows": rows,
	}
}

func nodeCells(o kube.Object) []any {
	var n kube.Node
	_ = kube.FromObject(o, &n)
	status := "Unknown"
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			if c.Status == "True" {
				status = "Ready"
			} else {
				status = "NotReady"
			}
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	var roles []string
	for k := range n.Metadata.Labels {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	sort.Strings(roles)
	addr := func(t string) string {
		for _, a := range n.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	return []any{n.Metadata.Name, status, orNone(strings.Join(roles, ",")), age(o), n.Status.NodeInfo.KubeletVersion,
		addr("InternalIP"), addr("ExternalIP"), n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion, n.Status.NodeInfo.ContainerRuntimeVersion}
}

func podCells(o kube.Object) []any {
	var p kube.Pod
	_ = kube.FromObject(o, &p)
	ready, restarts := 0, 0
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
		restarts += c.RestartCount
	}
	return []any{p.Metadata.Name, fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers)), p.Status.Phase,
		fmt.Sprint(restarts), age(o), orNone(p.Status.PodIP), orNone(p.Spec.NodeName), "<none>", "<none>"}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func age(o kube.Object) string {
	t, err := time.Parse(time.RFC3339, kube.Str(o, "metadata.creationTimestamp"))
	if err != nil {
		return "<unknown>"
	}
	return humanDuration(time.Since(t))
}

// humanDuration is apimachinery's duration.HumanDuration, which kubectl's
// AGE column uses.
func humanDuration(d time.Duration) string {
	if seconds := int(d.Seconds()); seconds < -1 {
		return "<invalid>"
	} else if seconds < 0 {
		return "0s"
	} else if seconds < 60*2 {
		return fmt.Sprintf("%ds", seconds)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	} else if minutes < 60*3 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := int(d/time.Minute) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 24*8:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*2:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*8:
		if dy := (hours / 24) % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, dy)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}
