#!/bin/sh
# rke2-uninstall.sh as installed with the cargoship test engine (a test
# double for rke2, see docs/test-engine.md): rke2's tarball uninstall less
# the RPM, SELinux module and fapolicyd steps, which have nothing to undo
# on a host the test engine was installed on.
if [ "$(id -u)" -ne 0 ]; then
    echo "$(basename "$0"): this script must be run as root" >&2
    exit 1
fi
set -x

# The tarball's prefix is where this script was unpacked (/usr/local, or
# /opt/rke2 where /usr/local is read-only).
ROOT=$(dirname "$(dirname "$(readlink -f "$0")")")
RKE2_DATA_DIR=${RKE2_DATA_DIR:-/var/lib/rancher/rke2}

"${ROOT}/bin/rke2-killall.sh"

systemctl disable rke2-server || true
systemctl reset-failed rke2-server || true
systemctl disable rke2-agent || true
systemctl reset-failed rke2-agent || true
systemctl daemon-reload

rm -f "${ROOT}"/lib/systemd/system/rke2-*.service "${ROOT}"/lib/systemd/system/rke2-*.env
rm -f /etc/systemd/system/rke2-*.service /etc/systemd/system/rke2-*.env
rm -f "${ROOT}/bin/rke2" "${ROOT}/bin/rke2-killall.sh"
rm -rf "${ROOT}/share/rke2"

rm -rf /etc/rancher/rke2 /etc/rancher/node /etc/cni /opt/cni/bin /var/lib/cni/ \
    /var/log/pods/ /var/log/containers /var/log/calico /var/lib/kubelet "${RKE2_DATA_DIR}"
rmdir /etc/rancher /var/lib/rancher 2>/dev/null || true

rm -f "${ROOT}/bin/rke2-uninstall.sh"
