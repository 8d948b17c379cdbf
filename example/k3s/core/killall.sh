#!/bin/sh
# k3s-killall.sh: stop k3s and everything it started, leaving its data in place.
# Written for cargoship's air-gapped k3s install; it follows what k3s's own
# install.sh generates (stop units, kill container shims, unmount, remove CNI
# links and rules).
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"

K3S_DATA_DIR=${K3S_DATA_DIR:-/var/lib/rancher/k3s}

for service in /etc/systemd/system/k3s*.service; do
    [ -s "$service" ] && systemctl stop "$(basename "$service")"
done

pschildren() {
    ps -e -o ppid= -o pid= | sed -e 's/^\s*//g; s/\s\s*/\t/g;' | grep -w "^$1" | cut -f2
}

pstree() {
    for pid in "$@"; do
        echo "$pid"
        for child in $(pschildren "$pid"); do
            pstree "$child"
        done
    done
}

killtree() {
    kill -9 $(
        { set +x; } 2>/dev/null
        pstree "$@"
        set -x
    ) 2>/dev/null
}

getshims() {
    ps -e -o pid= -o args= | sed -e 's/^ *//; s/\s\s*/\t/;' | grep -w "$K3S_DATA_DIR"'/data/[^/]*/bin/containerd-shim' | cut -f1
}

killtree $({ set +x; } 2>/dev/null; getshims; set -x)

do_unmount_and_remove() {
    set +x
    while read -r _ path _; do
        case "$path" in $1*) echo "$path" ;; esac
    done < /proc/self/mounts | sort -r | xargs -r -t -n 1 sh -c 'umount -f "$0" && rm -rf "$0"'
    set -x
}

do_unmount_and_remove '/run/k3s'
do_unmount_and_remove '/var/lib/kubelet/pods'
do_unmount_and_remove '/var/lib/kubelet/plugins'
do_unmount_and_remove '/run/netns/cni-'

# Remove CNI namespaces
ip netns show 2>/dev/null | grep cni- | xargs -r -t -n 1 ip netns delete

# Delete network interface(s) that match 'master cni0'
ip link show 2>/dev/null | grep 'master cni0' | while read -r _ iface _; do
    iface=${iface%%@*}
    [ -z "$iface" ] || ip link delete "$iface"
done
for link in cni0 flannel.1 flannel-v6.1 kube-ipvs0 flannel-wg flannel-wg-v6 cilium_host cilium_net cilium_vxlan; do
    ip link delete "$link" 2>/dev/null
done
rm -rf /var/lib/cni/
for save in iptables-save ip6tables-save; do
    restore=${save%-save}-restore
    if command -v "$save" >/dev/null 2>&1; then
        "$save" | grep -v KUBE- | grep -v CNI- | grep -iv flannel | "$restore"
    fi
done
exit 0
