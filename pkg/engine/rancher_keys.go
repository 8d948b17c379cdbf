package engine

import "strings"

// serverOnlyKeys are config keys an agent must not get: flags only the server
// command defines (an agent warns "Unknown flag ... skipping" and the value
// does nothing), and rke2's control-plane flags, which the agent command
// accepts but only a server uses. Read from the server and agent flag tables
// of k3s (pkg/cli/cmds/server.go) and rke2
// (pkg/cli/cmds/{server,agent,root}.go) and docs/reference/engines.md 3.2.
// The earlier tool removed four of these and kept the rest in worker configs.
var serverOnlyKeys = keySet(
	// cluster membership and tokens
	"agent-token", "agent-token-file", "cluster-init",
	"cluster-reset", "cluster-reset-restore-path",
	// listener and certificate
	"tls-san", "tls-san-security", "advertise-address",
	"advertise-port", "https-listen-port", "supervisor-port",
	"apiserver-port", "apiserver-bind-address",
	// networking, all critical values every server must share
	"cluster-cidr", "service-cidr", "service-node-port-range",
	"cluster-dns", "cluster-domain", "egress-selector-mode",
	"flannel-backend", "flannel-ipv6-masq", "flannel-external-ip",
	"servicelb-namespace", "cni", "ingress-controller",
	"enable-servicelb",
	// admin kubeconfig
	"write-kubeconfig", "write-kubeconfig-mode", "write-kubeconfig-group",
	// control-plane components and their arguments
	"kube-apiserver-arg", "kube-scheduler-arg",
	"kube-controller-manager-arg", "kube-controller-arg",
	"kube-cloud-controller-manager-arg", "kube-cloud-controller-arg",
	"disable", "disable-scheduler", "disable-cloud-controller",
	"disable-kube-proxy", "disable-network-policy",
	"disable-helm-controller", "disable-apiserver",
	"disable-controller-manager", "disable-etcd", "disable-agent",
	"helm-job-image", "default-local-storage-path",
	"embedded-registry", "supervisor-metrics",
	"system-default-registry", "secrets-encryption",
	"secrets-encryption-provider",
	// datastore
	"datastore-endpoint", "datastore-cafile", "datastore-certfile",
	"datastore-keyfile", "kine-tls",
	// rke2 control plane (accepted by rke2 agent, used only by servers)
	"audit-policy-file", "pod-security-admission-config-file",
	"control-plane-resource-requests", "control-plane-resource-limits",
	"control-plane-probe-configuration",
	"kube-apiserver-image", "kube-controller-manager-image",
	"kube-scheduler-image", "cloud-controller-manager-image",
	"kube-apiserver-extra-mount", "kube-scheduler-extra-mount",
	"kube-controller-manager-extra-mount", "cloud-controller-manager-extra-mount",
	"kube-apiserver-extra-env", "kube-scheduler-extra-env",
	"kube-controller-manager-extra-env", "cloud-controller-manager-extra-env",
)

// serverOnly reports whether an agent config must drop key. Every etcd-*
// key (etcd-arg, etcd-snapshot-*, etcd-s3-*, etcd-image, etcd-extra-*) is
// the server's; a "key+" append follows its key.
func serverOnly(key string) bool {
	key = strings.TrimSuffix(key, "+")
	return serverOnlyKeys[key] || strings.HasPrefix(key, "etcd-")
}

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}
