package cluster

import "testing"

// prepareFirewalls starts firewalld on one worker and ufw on another of a
// container fleet, so the firewall phase meets every front end it supports:
// the image carries both, disabled. The other hosts use nftables.
func (w *world) prepareFirewalls(t *testing.T, in *inspector) {
	t.Helper()
	if w.backend != backendContainer {
		return
	}
	in.root(t, "kw0", "systemctl enable --now firewalld >/dev/null 2>&1 && firewall-cmd --state")
	in.root(t, "kw1", "ufw allow 22/tcp >/dev/null && ufw --force enable >/dev/null && ufw status | head -1")
}
