#!/usr/bin/env bash
# deps.sh installs the Debian packages the tests need: the fleet harness
# (debootstrap, systemd-nspawn, iproute2, nftables), an sshd for pkg/host's
# tests, zstd for the package benchmark, qemu, dosfstools and mtools for the
# VM fleet (test/fleet/microvm), and a kubectl. Safe to run twice.
# It needs root (apt-get); hack/demo.sh and hack/test.sh run it as root.
set -euo pipefail
pkgs=(debootstrap systemd-container iproute2 nftables openssh-client openssh-server sudo zstd ca-certificates containerd dpkg-dev dosfstools mtools qemu-system-x86 qemu-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The demo and the test engine run the real kubectl (the test engine has
# none of its own). One already on PATH, from anywhere, is kept; else
# Debian's kubernetes-client (kubectl 1.20) is enough for the test engine's
# API: the demo passes with it.
if ! command -v kubectl >/dev/null; then
  missing+=(kubernetes-client)
fi
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
