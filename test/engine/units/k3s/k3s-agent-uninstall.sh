#!/bin/sh
# k3s-agent-uninstall.sh as installed with the cargoship test engine (a test
# double for k3s, see docs/test-engine.md): k3s's uninstall less the
# k3s-selinux package and iptables steps, which have nothing to undo here.
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"
set -x
K3S_DATA_DIR=${K3S_DATA_DIR:-/var/lib/rancher/k3s}

/usr/local/bin/k3s-killall.sh

if command -v systemctl >/dev/null 2>&1; then
    systemctl disable k3s-agent
    systemctl reset-failed k3s-agent
    systemctl daemon-reload
fi

rm -f /etc/systemd/system/k3s-agent.service
rm -f /etc/systemd/system/k3s-agent.service.env

remove_uninstall() {
    rm -f /usr/local/bin/k3s-agent-uninstall.sh
}
trap remove_uninstall EXIT

if (ls /etc/systemd/system/k3s*.service || ls /etc/init.d/k3s*) >/dev/null 2>&1; then
    set +x; echo 'Additional k3s services installed, skipping uninstall of k3s'; set -x
    exit
fi

for cmd in kubectl crictl ctr; do
    if [ -L "/usr/local/bin/$cmd" ]; then
        rm -f "/usr/local/bin/$cmd"
    fi
done

rm -rf /etc/rancher/k3s
rm -rf /run/k3s
rm -rf /run/flannel
rm -rf "${K3S_DATA_DIR}"
rm -rf /var/lib/kubelet
rm -f /usr/local/bin/k3s
rm -f /usr/local/bin/k3s-killall.sh
