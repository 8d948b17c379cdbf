#!/bin/sh
# rke2-killall.sh as installed with the cargoship test engine (a test
# double for rke2, see docs/test-engine.md). It does the part of rke2's
# killall that applies to a host running the test engine: stop both rke2
# units, remove the static pod manifests and the runtime state. The test
# engine starts no containers and creates no mounts, CNI interfaces or
# iptables rules, so there are none to remove.
if [ "$(id -u)" -ne 0 ]; then
    echo "$(basename "$0"): this script must be run as root" >&2
    exit 1
fi
set -x

systemctl stop rke2-server.service || true
systemctl stop rke2-agent.service || true

for manifest in etcd kube-apiserver kube-controller-manager cloud-controller-manager kube-scheduler kube-proxy; do
    rm -f "/var/lib/rancher/rke2/agent/pod-manifests/$manifest.yaml"
done

rm -rf /run/k3s
rm -rf /var/lib/cni/
exit 0
