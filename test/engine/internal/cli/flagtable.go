package cli

import (
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
)

// kind is how a flag takes its value.
type kind int

const (
	kindString kind = iota
	kindBool
	kindSlice
)

// flag is one command-line flag, and so one config.yaml key.
type flag struct {
	name  string
	alias string // one-letter alias, as the real CLI has for a few
	kind  kind
	env   string // environment variable suffix after K3S_/RKE2_
	// modelled says the test engine acts on the flag; the others are
	// accepted (the real engine accepts them) and have no effect here.
	modelled bool
}

// spec is a compact table row: "name[,alias][:kind][=ENV][*]", kind one of
// s (string, the default), b (bool), l (list); * marks a modelled flag.
func spec(rows ...string) []flag {
	out := make([]flag, 0, len(rows))
	for _, r := range rows {
		var f flag
		if strings.HasSuffix(r, "*") {
			f.modelled, r = true, strings.TrimSuffix(r, "*")
		}
		r, f.env, _ = strings.Cut(r, "=")
		r, k, _ := strings.Cut(r, ":")
		f.name, f.alias, _ = strings.Cut(r, ",")
		switch k {
		case "b":
			f.kind = kindBool
		case "l":
			f.kind = kindSlice
		}
		out = append(out, f)
	}
	return out
}

// Flags both commands of both engines take (k3s pkg/cli/cmds/agent.go and
// the rke2 copy/drop table, docs/reference/engines.md 3.2).
var commonFlags = spec(
	"config,c=CONFIG_FILE*", "debug:b=DEBUG*", "data-dir,d=DATA_DIR*",
	"token,t=TOKEN*", "token-file=TOKEN_FILE*", "server,s=URL*",
	"node-name=NODE_NAME*", "with-node-id:b*", "node-label:l*", "node-taint:l*",
	"node-ip,i:l*", "node-external-ip:l*", "node-internal-dns:l", "node-external-dns:l",
	"kubelet-arg:l*", "kube-proxy-arg:l", "selinux:b=SELINUX", "protect-kernel-defaults:b",
	"lb-server-port=LB_SERVER_PORT", "private-registry", "resolv-conf=RESOLV_CONF",
	"container-runtime-endpoint", "default-runtime", "image-service-endpoint",
	"pause-image", "snapshotter", "rootless:b", "prefer-bundled-bin:b",
	"disable-default-registry-endpoint:b", "airgap-extra-registry:l", "enable-pprof:b",
	"image-credential-provider-bin-dir", "image-credential-provider-config",
	"vpn-auth=VPN_AUTH", "vpn-auth-file=VPN_AUTH_FILE", "nonroot-devices:b",
	"log,l", "alsologtostderr:b", "v",
)

// k3s agents also take the flannel and docker flags.
var k3sAgentFlags = spec(
	"flannel-iface", "flannel-conf", "flannel-cni-conf", "docker:b",
)

// rke2 adds its image, mount and profile flags to both commands.
var rke2CommonFlags = spec(
	"profile=CIS_PROFILE", "audit-policy-file=AUDIT_POLICY_FILE*",
	"pod-security-admission-config-file=POD_SECURITY_ADMISSION_CONFIG_FILE*",
	"cloud-provider-name=CLOUD_PROVIDER_NAME", "cloud-provider-config=CLOUD_PROVIDER_CONFIG",
	"kubelet-path", "runtime-image", "kube-proxy-image", "kube-apiserver-image",
	"kube-controller-manager-image", "kube-scheduler-image", "cloud-controller-manager-image",
	"etcd-image", "control-plane-resource-requests", "control-plane-resource-limits",
	"control-plane-probe-configuration", "kube-apiserver-extra-mount:l",
	"kube-scheduler-extra-mount:l", "kube-controller-manager-extra-mount:l",
	"kube-proxy-extra-mount:l", "etcd-extra-mount:l", "cloud-controller-manager-extra-mount:l",
	"kube-apiserver-extra-env:l", "kube-scheduler-extra-env:l",
	"kube-controller-manager-extra-env:l", "kube-proxy-extra-env:l", "etcd-extra-env:l",
	"cloud-controller-manager-extra-env:l", "system-default-registry=SYSTEM_DEFAULT_REGISTRY",
)

// Flags only the server command defines (k3s pkg/cli/cmds/server.go).
var serverFlags = spec(
	"bind-address*", "advertise-address", "advertise-port", "https-listen-port*",
	"supervisor-port", "apiserver-port", "apiserver-bind-address",
	"tls-san:l*", "tls-san-security:b", "cluster-cidr:l", "service-cidr:l",
	"service-node-port-range", "cluster-dns:l", "cluster-domain", "egress-selector-mode",
	"servicelb-namespace", "write-kubeconfig,o=KUBECONFIG_OUTPUT*",
	"write-kubeconfig-mode=KUBECONFIG_MODE*", "write-kubeconfig-group=KUBECONFIG_GROUP*",
	"helm-job-image", "agent-token=AGENT_TOKEN*", "agent-token-file=AGENT_TOKEN_FILE*",
	"cluster-reset:b=CLUSTER_RESET", "cluster-reset-restore-path",
	"kube-apiserver-arg:l*", "etcd-arg:l", "kube-controller-manager-arg:l*",
	"kube-scheduler-arg:l", "kube-cloud-controller-manager-arg:l",
	"datastore-endpoint=DATASTORE_ENDPOINT", "datastore-cafile", "datastore-certfile",
	"datastore-keyfile", "kine-tls:b", "etcd-expose-metrics:b", "etcd-disable-snapshots:b",
	"etcd-snapshot-name", "etcd-snapshot-schedule-cron", "etcd-snapshot-retention",
	"etcd-snapshot-dir", "etcd-snapshot-compress:b", "etcd-s3:b", "etcd-s3-endpoint",
	"etcd-s3-endpoint-ca", "etcd-s3-skip-ssl-verify:b", "etcd-s3-access-key",
	"etcd-s3-secret-key", "etcd-s3-bucket", "etcd-s3-region", "etcd-s3-folder",
	"etcd-s3-insecure:b", "etcd-s3-timeout", "default-local-storage-path", "disable:l",
	"disable-scheduler:b", "disable-cloud-controller:b", "disable-kube-proxy:b",
	"disable-network-policy:b", "disable-helm-controller:b", "disable-apiserver:b",
	"disable-controller-manager:b", "disable-etcd:b", "disable-agent:b*",
	"embedded-registry:b", "supervisor-metrics:b", "secrets-encryption:b",
	"secrets-encryption-provider",
)

// k3s server flags rke2 drops: rke2 always runs etcd and its own CNIs.
var k3sServerFlags = spec(
	"cluster-init:b=CLUSTER_INIT*", "flannel-backend", "flannel-ipv6-masq:b",
	"flannel-external-ip:b", "system-default-registry",
)

// rke2 server flags k3s does not have.
var rke2ServerFlags = spec("cni:l=CNI", "ingress-controller:l", "enable-servicelb:b")

// flagsFor is the flag table of one command of one engine.
func flagsFor(fl flavor.Flavor, command string) map[string]flag {
	sets := [][]flag{commonFlags}
	if fl.Name == "rke2" {
		sets = append(sets, rke2CommonFlags)
		if command == "server" {
			sets = append(sets, serverFlags, rke2ServerFlags)
		}
	} else {
		sets = append(sets, k3sAgentFlags)
		if command == "server" {
			sets = append(sets, serverFlags, k3sServerFlags)
		}
	}
	table := map[string]flag{}
	for _, s := range sets {
		for _, f := range s {
			table[f.name] = f
		}
	}
	return table
}
