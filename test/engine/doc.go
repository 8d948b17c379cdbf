// Package testengine builds and lays out the cargoship test engine: a TEST
// DOUBLE for k3s and rke2, built from ./cmd/testengine, that a test package
// carries in place of the engine binary. It behaves as the real engine
// documents itself where cargoship can see it — version output, config
// files, token and kubeconfig files, units, ports, joining, and the API
// calls kubectl makes — and runs no containers. cargoship drives it exactly
// as it drives the real engine.
//
// Build compiles it for an engine and version; Layout says where each file
// of a test package goes; RKE2Tarball writes rke2's release tarball
// around it. docs/test-engine.md says what it models and what it does not.
package testengine
