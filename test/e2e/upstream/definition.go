package upstream

import (
	"bytes"
	"text/template"

	"github.com/colonel-byte/cargoship/test/k8s"
)

// placed is one file of the definition's binary route: a source relative
// to the definition directory and its place on the host.
type placed struct {
	Source, Target string
	Executable     bool
}

// definitionInput is what the definition template is rendered from.
type definitionInput struct {
	Release  k8s.Release
	Files    []placed
	Images   []string
	Manifest string // the pod network's manifest, under files/
}

// definition is the upstream distro definition the walk's package is
// created from: kubeadm with containerd on every host's binary route,
// every binary built from source (test/k8s), the images kubeadm deploys
// plus the pod network's and the probe's, and the settings a node in a
// container fleet host needs (docs/e2e.md, "The upstream walk"):
//   - failCgroupV1: false, because this machine mounts cgroup v1 and the
//     kubelet refuses it by default since 1.35;
//   - cgroupDriver: cgroupfs, because a fleet host's systemd does not own
//     the cgroup controllers it is given (containerd's SystemdCgroup follows);
//   - kube-proxy leaves conntrack's global sysctls alone (read-only in a
//     container), as kind does;
//   - the kubelet gives pods a resolv.conf of the package's (resolvConf):
//     the host's names a loopback address, and CoreDNS forwarding to it
//     would loop;
//   - no etcd or CoreDNS image tag is pinned: the build's are kubeadm's
//     own for the release, and kubeadm upgrade keeps a pinned tag, which
//     would leave etcd and CoreDNS at the older release's;
//   - SystemVerification is not a preflight error: kubeadm reads the
//     kernel's config, which a container cannot see.
var definition = template.Must(template.New("distro.yaml").Parse(`kind: ZarfDistro
metadata:
  name: upstream-e2e
  description: kubeadm {{.Release.Kubernetes}} built from source, with containerd {{.Release.Containerd}}
  version: {{.Release.Kubernetes}}
  architectures: [amd64]
spec:
  type: upstream
  version: {{.Release.Kubernetes}}
  config:
    engine:
      config:
        clusterConfiguration:
          networking:
            podSubnet: 10.244.0.0/16
            serviceSubnet: 10.96.0.0/12
        initConfiguration:
          nodeRegistration:
            ignorePreflightErrors: [SystemVerification]
        joinConfiguration:
          nodeRegistration:
            ignorePreflightErrors: [SystemVerification]
        kubeletConfiguration:
          failCgroupV1: false
          cgroupDriver: cgroupfs
          failSwapOn: false
          resolvConf: /etc/cargoship-e2e/resolv.conf
          imageGCHighThresholdPercent: 100
          evictionHard:
            nodefs.available: "0%"
            nodefs.inodesFree: "0%"
            imagefs.available: "0%"
        kubeProxyConfiguration:
          conntrack:
            maxPerCore: 0
            tcpEstablishedTimeout: 0s
            tcpCloseWaitTimeout: 0s
    os:
      sysctl:
        net.ipv4.ip_forward: "1"
        net.bridge.bridge-nf-call-iptables: "1"
        net.bridge.bridge-nf-call-ip6tables: "1"
      files:
{{- range .Files}}
        - source: {{.Source}}
          target: {{.Target}}
          perm: "{{if .Executable}}0755{{else}}0644{{end}}"
{{- if .Executable}}
          executable: true
{{- end}}
          selector:
            package: binary
{{- end}}
    manifests:
      - source: files/{{.Manifest}}
        target: /etc/cargoship/manifests/{{.Manifest}}
    imageConfig:
      # gzip: a fleet host has gzip and no zstd, and ctr reads a plain tar only.
      compression: gz
      images:
{{- range .Images}}
        - {{.}}
{{- end}}
`))

func renderDefinition(in definitionInput) ([]byte, error) {
	var b bytes.Buffer
	err := definition.Execute(&b, in)
	return b.Bytes(), err
}
