// Package podnet is the test suite's pod network: a small host-gw network
// for kubeadm clusters whose nodes share one L2 segment, built here from
// source because no network add-on's image can be pulled offline.
//
// It stands in for flannel with its host-gw backend and behaves like it:
// every node gets its pod subnet from kube-controller-manager
// (spec.podCIDR, allocated from kubeadm's podSubnet), pods on a node sit
// on the bridge cni0 through the standard CNI plugins (bridge with
// host-local IPAM, then portmap), and each node routes every other node's
// pod subnet via that node's InternalIP, with no encapsulation. Unlike
// flanneld it keeps no lease store of its own: the Node objects are the
// only state, read with the pod's ServiceAccount.
//
// The daemon (cmd/podnet) runs as a DaemonSet in the host's network
// namespace; Manifest renders it, Image packs the static binary that
// BuildBinary builds. The CNI plugin binaries themselves are not part of
// this package: they must be in /opt/cni/bin on every node.
//
// docs/reference/podnet.md says what this relies on: the CNI conflist
// format and the plugins' options, the node CIDR allocation, the in-cluster
// configuration, and the flannel behaviour it mirrors.
package podnet
