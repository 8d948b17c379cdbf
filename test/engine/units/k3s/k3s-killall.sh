#!/bin/sh
# k3s-killall.sh as installed with the cargoship test engine (a test
# double for k3s, see docs/test-engine.md). It does the part of k3s's
# killall that applies to a host running the test engine: stop every k3s
# unit and remove the runtime state under /run/k3s and /var/lib/cni. The
# test engine starts no containers and creates no mounts, CNI interfaces or
# iptables rules, so there are none to remove.
[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"
set -x

for service in /etc/systemd/system/k3s*.service; do
    [ -s "$service" ] && systemctl stop "$(basename "$service")"
done

for service in /etc/init.d/k3s*; do
    [ -x "$service" ] && "$service" stop
done

rm -rf /run/k3s
rm -rf /var/lib/cni/
exit 0
