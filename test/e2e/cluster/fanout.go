package cluster

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// assertFanout checks what peer fan-out did in the upload phases
// (docs/apply.md, "Peer fan-out"). On the container fleet, whose hosts all
// get the engine's binary, some host must have got a file from another
// and no relay may have fallen back; with CARGOSHIP_E2E_NO_FANOUT none may
// have. On every backend no relay key may be left: no marked line in any
// authorized_keys, no key directory on any sender.
func (w *world) assertFanout(t *testing.T, in *inspector, s *node.Fleet) {
	t.Helper()
	relayed := 0
	for _, c := range s.Report.Changes() {
		if strings.Contains(c.What, ", relayed from ") {
			relayed++
		}
	}
	var fallbacks []string
	for _, n := range s.Report.Notes() {
		if strings.HasPrefix(n, "fan-out:") {
			fallbacks = append(fallbacks, n)
		}
	}
	t.Logf("fan-out: %d file(s) relayed host to host, %d fallback note(s)", relayed, len(fallbacks))
	switch {
	case w.noFanout:
		assert.Zero(t, relayed, "--fanout=false relays nothing")
	case w.backend == backendContainer:
		assert.Positive(t, relayed, "every host of the container fleet gets the engine's binary: some host must get it from another")
		assert.Empty(t, fallbacks, "the container fleet's hosts reach each other: no relay may fall back")
	case relayed == 0:
		w.standDown(t, "fan-out's relays", "no relay happened on this backend (the hosts share no file of 1 MiB or more)")
	}
	for _, h := range s.Hosts {
		name := h.Spec.Hostname
		keys := in.root(t, name, `getent passwd | cut -d: -f6 | while read -r d; do cat "$d/.ssh/authorized_keys" 2>/dev/null; done; true`)
		assert.NotContains(t, keys, "cargoship-relay-", "%s: a relay's key is still authorized", name)
		left := in.root(t, name, `ls -d /tmp/cargoship-relay.* 2>/dev/null; true`)
		assert.Empty(t, strings.TrimSpace(left), "%s: a relay's key directory is left", name)
	}
}
