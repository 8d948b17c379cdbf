// Package faults is cargoship's fault suite (docs/e2e.md, Fault tests): on
// a small container fleet of its own (test/fleet, fleet "faults": one
// controller, one worker) it breaks an apply the ways a fleet breaks, one
// fault at a time — the operator killed, the SSH connection cut, a host
// powered off, two applies at once, a disk that fills — and checks each
// ends with nothing placed unverified, a lock that follows the lock rules
// (docs/apply.md, The lock), and a rerun that converges. Every test here
// needs root; run it with `sudo go test ./test/e2e/faults/...`.
package faults
