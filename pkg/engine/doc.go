// Package engine is everything engine-specific the phases need, for k3s,
// rke2 and upstream kubeadm behind one interface: where files live, which
// services run, which ports they use, what each node's configuration looks
// like, how to read versions and which commands drive the engine.
//
// Nothing here touches a host. Commands are shell command lines built with
// shell.Join; files are returned as content for the caller to write. That
// keeps the engine rules testable without a machine (testdata/ holds the
// golden renders; go test -update rewrites them).
//
// Decisions, with the reason for each (the fact sheet is
// docs/reference/engines.md):
//
//   - The join URL uses the engine's own port: 6443 for k3s (supervisor
//     and API share it), 9345 for rke2, 6443 for kubeadm. Every node but
//     the founder joins through RenderInput.JoinAddress: the load
//     balancer, or the founder during a cold HA bootstrap (JoinAddress).
//   - The k3s founder always gets cluster-init: true, so a one-controller
//     cluster runs embedded etcd and can take controllers later (a SQLite
//     server cannot). An explicit cluster-init in the config wins. rke2 has
//     no such flag: its founder is the server without a server line.
//   - Tokens live in 0600 files named by token-file (agent-token-file);
//     a config never holds one, and a document that sets token is refused.
//     The founder may start without a token; the caller then reads
//     ServerTokenPath (the secure K10 form that pins the CA) for the rest.
//   - A profile's engineConfig is laid over the distro's: a key replaces
//     the distro's value (lists too), and "key+" appends, which is the
//     engines' own rule between config files. Host labels and taints are
//     added to node-label and node-taint, a host label winning on its key.
//   - Agent configs drop every server-only key (rancher_keys.go).
//   - Profile kubeletConfig becomes a KubeletConfiguration file named by
//     kubelet-arg config= (k3s, rke2 >= 1.32) or a kubeadm
//     kubeletconfiguration patch (upstream): both are per node, where the
//     kubeadm KubeletConfiguration document is cluster-wide.
//   - registries.yaml is the distro's engine.registries with the cluster's
//     registries over it; credentials go to the mirror endpoints an entry
//     names, never to the registry they stand in for. Upstream gets
//     containerd hosts.toml files, which carry no credentials, so auth is
//     refused there.
//   - k3s has no audit-policy-file or pod-security-admission-config-file
//     keys; it gets kube-apiserver-arg entries (its hardening guide's form).
//   - kubeadm gets v1beta4 documents in one --config file, separated by
//     "---" because kubeadm reads them that way; other files never start
//     with "---".
//   - Services are started with --no-block: their units have no start
//     timeout, so a node that cannot join would hang a waiting start.
//   - A kube-vip VIP is an engine file on controllers, written before the
//     engine starts: a DaemonSet in the k3s/rke2 manifests directory, the
//     same on every controller, or a kubeadm static pod, the founder's
//     reading super-admin.conf until init is done (kubevip.go,
//     docs/reference/kube-vip.md). The VIP is in every tls-san/certSANs.
//   - Chart values are text/templates over .VIP, .APIAddress and
//     .APIPort: a package is built for many clusters, and a CNI without
//     kube-proxy must be told the API's address.
package engine
