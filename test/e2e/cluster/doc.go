// Package cluster is cargoship's phase suite: it walks apply's phase list one
// phase at a time against real hosts and asserts each phase's effect from
// inside them. The hosts come from a backend chosen by CARGOSHIP_E2E_BACKEND:
// container (the default: systemd-nspawn hosts on this machine, test/fleet),
// microvm (local VMs, not built yet) or inventory (a user's own hosts named
// by CARGOSHIP_E2E_INVENTORY). Every test here needs root for the container
// backend; run it with `sudo go test ./test/e2e/cluster/...`.
package cluster
