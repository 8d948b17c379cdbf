#!/usr/bin/env bash
# deps.sh installs the Debian packages the tests need: the fleet harness
# (debootstrap, systemd-nspawn, iproute2, nftables), an sshd for pkg/host's
# tests, and zstd for the package benchmark. Safe to run twice.
set -euo pipefail
pkgs=(debootstrap systemd-container iproute2 nftables openssh-client openssh-server sudo zstd ca-certificates containerd dpkg-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
