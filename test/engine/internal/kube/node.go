package kube

// NodeInternalIP is a node's first InternalIP address, or "".
func NodeInternalIP(n Object) string {
	addrs, _ := Get(n, "status.addresses").([]any)
	for _, a := range addrs {
		if am, ok := a.(map[string]any); ok && am["type"] == "InternalIP" {
			s, _ := am["address"].(string)
			return s
		}
	}
	return ""
}

// IsControlPlane reports whether a node carries the control-plane role.
func IsControlPlane(n Object) bool {
	return StrMap(n, "metadata.labels")["node-role.kubernetes.io/control-plane"] == "true"
}
