package cluster

import (
	"testing"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// inspector reads hosts over its own connections, separate from the ones
// the phases use, so an assertion sees the host and not cargoship's view
// of it (e2eutil.Inspector, over every host of the document). eng is the
// engine the hosts run, whose paths, units and kubectl the assertions use.
type inspector struct {
	*e2eutil.Inspector
	eng engine.Engine
}

func newInspector(t *testing.T, w *world) *inspector {
	return &inspector{e2eutil.NewInspector(t, w.views.All.Spec.Hosts, w.knownHosts), w.distro.Engine()}
}

// engineConfig is a host's engine config as the host holds it.
func (in *inspector) engineConfig(t *testing.T, hostname string) string {
	t.Helper()
	return in.root(t, hostname, "cat "+in.eng.Paths().Config)
}

// root runs a read-only command as root and returns its trimmed stdout.
func (in *inspector) root(t *testing.T, hostname, cmd string) string {
	t.Helper()
	return in.Root(t, hostname, cmd)
}

// try runs a command as root and reports whether it succeeded.
func (in *inspector) try(t *testing.T, hostname, cmd string) (string, bool) {
	t.Helper()
	return in.Try(t, hostname, cmd)
}

// fingerprint hashes every file under the paths cargoship may write, so a
// test can prove a run changed no byte.
func (in *inspector) fingerprint(t *testing.T, hostname string) string {
	t.Helper()
	return in.Fingerprint(t, hostname)
}

// sameFingerprint fails with only the lines that differ.
func sameFingerprint(t *testing.T, hostname, before, after, why string) {
	t.Helper()
	e2eutil.SameFingerprint(t, hostname, before, after, why)
}
