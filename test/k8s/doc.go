// Package k8s builds a Kubernetes release from source, offline, for the
// upstream (kubeadm) engine's tests: every binary a kubeadm node runs
// (kubeadm, kubelet, kubectl, the control plane, kube-proxy, etcd, CoreDNS,
// the CNI plugins, containerd and its shim, runc and a pause program) and
// the images kubeadm deploys, named and tagged as kubeadm expects so that
// no image is ever pulled.
//
// Sources come from the Go module proxy (Kubernetes with its staging
// modules, etcd, CoreDNS, containerd, the CNI plugins) and from Debian's
// archive (runc, and iptables with its libraries for the kube-proxy image).
// A build is pinned by a Release and cached under the user cache directory;
// see docs/reference/kubernetes-build.md for the facts the recipe relies on.
package k8s
