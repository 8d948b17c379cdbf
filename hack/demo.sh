#!/usr/bin/env bash
# demo.sh runs the demo (hack/demo, docs/demo.md) on a fresh machine: the
# demo's hosts are systemd-nspawn containers, so it needs root. Run as root
# it goes straight on; run as anyone else it runs itself again through sudo,
# keeping PATH so root finds the same go. It installs the Debian packages it
# needs (hack/deps.sh) before building anything. Its arguments are the
# demo's (-keep, -fleet NAME, -workers N, -down).
set -euo pipefail
# Before the cd below: "$0" is the path as it was typed, relative to the
# directory it was typed in.
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "hack/demo.sh needs root (its hosts are systemd-nspawn containers) and there is no sudo here: run it as root" >&2
    exit 1
  fi
  echo "hack/demo.sh: not root; running again through sudo" >&2
  exec sudo env "PATH=$PATH" "$0" "$@"
fi
cd "$(dirname "$0")/.."
./hack/deps.sh
exec go run ./hack/demo "$@"
