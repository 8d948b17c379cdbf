#!/usr/bin/env bash
# test.sh runs every test cargoship has: the unit tests first, then the tests
# that need root and real hosts (the fleet harness, the test engine, the
# fault tests, the provider's acceptance tests with the terraform binary), then
# the phase suite four times against a container fleet: its staging half
# (with peer fan-out off), the full walk (apply, converged re-run, join,
# upgrade, labels, reset, and the three-controller and VIP walks) with the
# test engine as k3s, the single-controller walk with it as rke2, and the
# single-controller walk once more on packages built from example/local-k3s
# instead of the test package; the phase suite on two qemu guests (SELinux
# enforcing, fapolicyd: the dry run and apply);
# then Kubernetes built from source and the upstream walk on it: kubeadm,
# real kubelets, CoreDNS, a pod network, an upgrade (docs/e2e.md). Run it as
# root, or as a user with sudo: it then runs itself again through sudo,
# keeping PATH so root finds the same go, and the CARGOSHIP_* knobs.
#
# With arguments it runs only the tiers they name, one after the other, in
# the order given, their output on this terminal:
#   ./hack/test.sh unit stage
# Without, it runs every tier in the parallel lanes of $lanes below (what
# .ci/run does): a lane runs its tiers one after the other, each tier's
# output goes to build/tier-TIER.log and is printed once every lane is done,
# and a table of each tier's wall and CPU time ends the run (docs/e2e.md,
# "How long"). The mage targets test:unit, test:endToEndClusterStage and
# test:endToEndCluster run the tiers unit, stage and full (magefiles/test.go).
set -euo pipefail
tiers=(lint unit fleet helpers k8s-build k8s faults provider cli stage full ha full-rke2 package vm upstream)
# The lanes share nothing a tier writes: each phase-suite tier has a fleet
# of its own name (CARGOSHIP_E2E_FLEET), the other suites had theirs
# already, and what tiers share on disk (the fleet image, the VM image, the
# Kubernetes builds, the hosts' .debs) is built under a lock or renamed into
# place whole. The Kubernetes builds start first: they are the longest
# path, so they take the CPU the walks leave while they wait on their
# hosts; the tiers that need the builds come after them, in that lane.
# Warm, the machine is busy for the whole run, so a run is as long as its
# CPU time over two cores: the lanes are balanced on the last measured
# walls (docs/e2e.md, "How long") so that no lane runs on alone at the
# end. Lint, all CPU and no wait, comes last in its lane: niced at the
# head of a lane, it held the lane's walks back 50 minutes behind the
# builds.
lanes=(
  "kubernetes: k8s-build upstream provider k8s"
  "vm: vm lint"
  "walks: unit faults cli full package"
  "suites: fleet helpers ha full-rke2 stage"
)
for t in "$@"; do
  if [[ " ${tiers[*]} " != *" $t "* ]]; then
    echo "hack/test.sh: no tier \"$t\"; the tiers: ${tiers[*]} (none: all of them)" >&2
    exit 2
  fi
done
# Before the cd below: "$0" is the path as it was typed, relative to the
# directory it was typed in.
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "hack/test.sh needs root (the fleet tests create network namespaces and containers) and there is no sudo here: run it as root" >&2
    exit 1
  fi
  echo "hack/test.sh: not root; running again through sudo" >&2
  keep=("PATH=$PATH")
  for v in $(compgen -e); do
    if [[ $v == CARGOSHIP_* ]]; then keep+=("$v=${!v}"); fi
  done
  exec sudo env "${keep[@]}" "$0" "$@"
fi
cd "$(dirname "$0")/.."
./hack/deps.sh
go mod download
mkdir -p build
# The tests internal/testtier gates as slow run here (as root they would
# anyway; this says so).
export CARGOSHIP_TEST_SLOW=1

# gofmt, go vet and golangci-lint (v2.15.0, installed when missing), as
# .ci/run has always checked them.
tier_lint() {
  echo "== gofmt"
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go'))
  if [[ -n $unformatted ]]; then
    echo "not gofmt'ed:"
    echo "$unformatted"
    return 1
  fi
  echo "== go vet"
  go vet ./...
  echo "== golangci-lint"
  export PATH="$PATH:$(go env GOPATH)/bin"
  command -v golangci-lint >/dev/null || go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
  golangci-lint run ./...
}

tier_unit() {
  # goreleaser is built (and cached by go run) before the tests: its first
  # build takes 9 minutes of CPU, over 20 on a loaded machine, and inside
  # the release test it would count against the test's own deadline.
  local goreleaser
  goreleaser=$(sed -n 's/^const Goreleaser = "\(.*\)"$/\1/p' hack/release/build.go)
  echo "== goreleaser ($goreleaser), built for the release test"
  go run -exec true "$goreleaser"
  echo "== unit tests"
  go test -count=1 -timeout 25m ./pkg/... ./cmd/... ./hack/... ./internal/...
}

# The kubelet test runs a kubelet of the Kubernetes build: the k8s tier's,
# after the builds.
node_kubelet_test() { echo '^TestNodeRuntimeKubelet_Root$'; }
tier_fleet() {
  echo "== fleet harness and test engine"
  # the VM backend has a tier of its own (vm)
  go test -count=1 -p 1 -timeout 30m -skip "$(node_kubelet_test)" $(go list ./test/fleet/... | grep -v /microvm) ./test/engine/...
}

# The suites' shared helpers: the test package is the same bytes in two
# runs (it builds two test packages, so it is not a unit test's cost).
tier_helpers() {
  echo "== e2e helpers"
  go test -count=1 -timeout 10m ./test/e2e/e2eutil/...
}

# Kubernetes built from source (docs/e2e.md, "The upstream walk"): the
# build's binaries and images, run under containerd, and the suite's pod
# network. The build is cached under the user cache dir: about 14 minutes
# per release the first time on two cores, a second from the cache.
tier_k8s_build() {
  echo "== Kubernetes from source: every pinned release, built or found in the cache"
  go run ./test/k8s/cmd/k8s-build -version all
}

tier_k8s() {
  echo "== Kubernetes from source and the pod network"
  go test -count=1 -p 1 -timeout 60m ./test/k8s/...
  echo "== a kubelet of the build on NodeRuntime fleet hosts"
  go test -count=1 -timeout 30m -run "$(node_kubelet_test)" ./test/fleet/container/
}

tier_faults() {
  echo "== fault tests"
  go test -count=1 -p 1 -timeout 30m -v ./test/e2e/faults/...
}

tier_provider() {
  echo "== provider: terraform acceptance tests (docs/provider.md)"
  go test -count=1 -p 1 -timeout 30m -v ./test/e2e/provider/...
}

tier_cli() {
  echo "== cli: -o json and --detailed-exitcode on the built binary (docs/apply.md)"
  go test -count=1 -p 1 -timeout 20m -v ./test/e2e/cli/...
}

# The phase suite logs a lot; keep it in build/ and show the verdicts.
# suite NAME [-run=REGEXP] [-skip=REGEXP] VAR=VALUE...
suite() {
  local name=$1; shift
  local run=()
  while [[ ${1:-} == -run=* || ${1:-} == -skip=* ]]; do run+=("$1"); shift; done
  echo "== phase suite: $name"
  if ! env "$@" go test -count=1 -timeout 60m -v "${run[@]}" ./test/e2e/cluster/... >"build/e2e-$name.log" 2>&1; then
    grep -E '^\s*--- (FAIL|PASS|SKIP)|^(FAIL|ok)|stood down' "build/e2e-$name.log" | tail -80
    echo "phase suite $name failed; the whole log is build/e2e-$name.log; its last lines:" >&2
    grep -v 'handler.go' "build/e2e-$name.log" | tail -60 >&2
    return 1
  fi
  grep -E '^\s*--- (FAIL|PASS|SKIP)|^(FAIL|ok)|stood down' "build/e2e-$name.log" | tail -80
}
# The staging half with peer fan-out off (--fanout=false): every file from
# the operator, and nothing relayed; the full walks keep it on.
tier_stage() { suite stage CARGOSHIP_E2E_STAGE_ONLY=1 CARGOSHIP_E2E_NO_FANOUT=1 CARGOSHIP_E2E_FLEET=e2estage; }
# The full walk, with the upgrade; the other knobs pass through (e.g.
# CARGOSHIP_E2E_DISTRO, or CARGOSHIP_E2E_PACKAGE for a package of yours,
# which upgrades only to the one CARGOSHIP_E2E_UPGRADE_PACKAGE names).
# The walks with fleets of their own are the ha tier's, so the two can
# run in different lanes.
ha_walks() { echo '^(TestThreeControllers|TestVIPFailoverWithKeepalived|TestKubeVIPIsDeployedAndItsWaitNamed)$'; }
tier_full() {
  local upgrade=(CARGOSHIP_E2E_UPGRADE=1)
  if [[ -n ${CARGOSHIP_E2E_UPGRADE+set} || -n ${CARGOSHIP_E2E_PACKAGE:-} ]]; then upgrade=(); fi
  suite full -skip="$(ha_walks)" "${upgrade[@]}" CARGOSHIP_E2E_FLEET=e2e
}
# The three-controller walk (founding, joins one at a time, the upgrade,
# a reset of the founder) and the VIP walks (keepalived failover, kube-vip),
# each on a fleet of its own (e2eha, e2evip, e2ekvip).
tier_ha() { suite ha -run="$(ha_walks)"; }
# The same walk with the test engine as rke2. The three-controller and VIP
# walks, which exercise no engine difference, are the k3s tier's: with them
# twice CI would not fit its hour.
tier_full_rke2() { suite full-rke2 -run='^TestClusterPhases$' CARGOSHIP_E2E_UPGRADE=1 CARGOSHIP_E2E_DISTRO=rke2 CARGOSHIP_E2E_FLEET=e2erke2; }
# A package built from a definition of local sources only (the test engine
# as k3s, example/local-k3s), walked in place of the test package: the
# assertions come from its index and manifest (docs/e2e.md, Your own
# package).
tier_package() {
  go run ./example/local-k3s/gen >/dev/null
  go run ./example/local-k3s/gen -version 1.35.4-k3s1 -out build/local-k3s-1.35.4 >/dev/null
  go run ./cmd/cargoship create example/local-k3s -o build/ >/dev/null
  go run ./cmd/cargoship create build/local-k3s-1.35.4 -o build/ >/dev/null
  suite package -run='^TestClusterPhases$' CARGOSHIP_E2E_PACKAGE="$PWD/build/cargoship-local-k3s-amd64-1.35.3-k3s1.tar.zst" \
    CARGOSHIP_E2E_UPGRADE_PACKAGE="$PWD/build/cargoship-local-k3s-amd64-1.35.4-k3s1.tar.zst" CARGOSHIP_E2E_FLEET=e2epkg
}

# The VM fleet (docs/vm-fleet.md): the microvm backend's unit tests and
# its image (TestImageRootBuild: built once, 15 minutes beside other
# suites at a load of 17, most of it apt; it is labelled offline and boots
# nothing), then the phase suite on two emulated guests with SELinux
# enforcing and fapolicyd. Before the walk the suite checks its own guests
# as TestImageRootBoot and TestFleetLifecycle_Root would check theirs (the
# image's labels, modules and fapolicyd, sudo, the fleet segment, a reboot
# of kw0, and at the end that Down leaves nothing), so CI boots two guests,
# not five; both tests still run alone. Then bad input, the fresh dry run
# and apply, phases 8 to 11 doing real work. Under TCG the converged re-run
# (5 to 9 minutes), the reboot check (5) and reset (13) would push CI past
# its hour, so they run as the documented whole walk, with the labels walk:
# CARGOSHIP_E2E_BACKEND=microvm go test -run '^TestClusterPhases$' ./test/e2e/cluster/
# (docs/vm-fleet.md); the container tiers walk converged and reset every run.
tier_vm() {
  echo "== VM fleet: qemu guests, SELinux enforcing, fapolicyd"
  if ! go test -count=1 -p 1 -timeout 80m -v -skip '^(TestImageRootBoot|TestFleetLifecycle_Root)$' ./test/fleet/microvm/... >build/vm-fleet.log 2>&1; then
    grep -E '^\s*--- (FAIL|PASS|SKIP)|^(FAIL|ok)' build/vm-fleet.log | tail -40
    echo "the VM fleet's tests failed; the whole log is build/vm-fleet.log; its last lines:" >&2
    tail -60 build/vm-fleet.log >&2
    return 1
  fi
  grep -E '^\s*--- (FAIL|PASS|SKIP)|^(FAIL|ok)|built microvm' build/vm-fleet.log | tail -40
  suite vm -run='^TestClusterPhases$/^(bad-input|dry-run-fresh|apply)$' CARGOSHIP_E2E_BACKEND=microvm
}

# The upstream engine on real Kubernetes: kubeadm, kubelet, containerd and
# the control plane built from source, on a container fleet whose hosts
# can run a kubelet (docs/e2e.md, "The upstream walk"). Its two walks run
# one after the other: side by side (six hosts of real Kubernetes at once)
# they put the load near 50 while the VM guests booted, and a rebooted
# guest took 9m38s of its 10 minutes to answer.
tier_upstream() {
  echo "== upstream walk: kubeadm on real Kubernetes"
  if ! go test -count=1 -timeout 80m -v ./test/e2e/upstream/... >build/e2e-upstream.log 2>&1; then
    grep -E '^\s*--- (FAIL|PASS|SKIP)|^(FAIL|ok)' build/e2e-upstream.log | tail -40
    echo "the upstream walk failed; the whole log is build/e2e-upstream.log; its last lines:" >&2
    grep -v 'handler.go' build/e2e-upstream.log | tail -60 >&2
    return 1
  fi
  grep -E '^\s*--- (FAIL|PASS|SKIP)|^(FAIL|ok)|the workload at|in [0-9.]+s' build/e2e-upstream.log | tail -60
}

export -f $(compgen -A function)
# shellcheck source=hack/tiertime.sh
source hack/tiertime.sh
if (($# > 0)); then
  run_serial "$@"
else
  run_lanes "${lanes[@]}"
fi
