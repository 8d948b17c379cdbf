// Package cli holds the end-to-end test of cargoship's output for
// machines: the real binary, built for the run, applies the test engine's
// package to a container fleet of its own (fleet "clijson": one controller,
// one worker) with -o json --detailed-exitcode, and every report it prints
// is checked against schema/report.schema.json (docs/apply.md, "Output for
// scripts"). It needs root, as the fleet does. schemacheck, beside it, is
// the small schema checker that test and pkg/node's unit tests share.
package cli
