#!/usr/bin/env bash
# test.sh runs every test cargoship has: the unit tests first, then the
# tests that need root and a fleet of real hosts (test/...), one package at a
# time because fleets share this machine's CPUs. Run it as root.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then
  echo "hack/test.sh needs root: the fleet tests create network namespaces and containers" >&2
  exit 1
fi
./hack/deps.sh
go mod download
echo "== unit tests"
go test -count=1 -timeout 20m ./pkg/... ./cmd/...
mkdir -p build
echo "== fleet and end-to-end tests"
go test -count=1 -p 1 -timeout 60m -v ./test/... 2>&1 | tee build/e2e.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|stood down|ready:' || true
# grep above only trims the log; the verdict is go test's own exit status.
exit "${PIPESTATUS[0]}"
