// Package buildinfo holds what the build stamps into the test engine with
// -ldflags -X, the way k3s and rke2 stamp their version and commit:
//
//	go build -ldflags "-X github.com/colonel-byte/cargoship/test/engine/internal/buildinfo.Version=v1.35.3+k3s1
//	  -X github.com/colonel-byte/cargoship/test/engine/internal/buildinfo.GitCommit=abcdef12" \
//	  -o k3s ./test/engine/cmd/testengine
//
// Unstamped, it prints "k3s version dev (HEAD)" as an unstamped k3s does.
package buildinfo

// Version is the engine release, e.g. v1.35.3+k3s1 or v1.35.4+rke2r1. It is
// also every node's status.nodeInfo.kubeletVersion.
var Version = "dev"

// GitCommit is the commit shown after the version: 8 hex characters for
// k3s, 40 for rke2.
var GitCommit = "HEAD"

// Engine is which engine the binary imitates when its file name does not
// say (k3s or rke2).
var Engine = "k3s"

// PackagePath is the import path -X flags address.
const PackagePath = "github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
