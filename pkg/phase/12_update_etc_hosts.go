package phase

import (
	"context"

	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// UpdateEtcHosts writes a managed block into /etc/hosts with every node's
// FQDN, name and private address (with --update-hosts). The rest of the
// file stays as it was.
type UpdateEtcHosts struct{ stepPhase }

// NewUpdateEtcHosts is phase 12.
func NewUpdateEtcHosts() *UpdateEtcHosts {
	return &UpdateEtcHosts{stepPhase{title: "Updating hosts file for clusters nodes"}}
}

// Prepare implements Preparer.
func (p *UpdateEtcHosts) Prepare(_ context.Context) error {
	s := p.state
	p.steps = map[*node.Host][]hostos.Step{}
	if !s.Options.UpdateHosts {
		return nil
	}
	var entries []hostos.HostsEntry
	for _, h := range s.Hosts {
		names := []string{}
		if h.Facts.FQDN != "" && h.Facts.FQDN != h.NodeName() {
			names = append(names, h.Facts.FQDN)
		}
		names = append(names, h.NodeName())
		entries = append(entries, hostos.HostsEntry{Address: h.Facts.PrivateAddress, Names: names})
	}
	for _, h := range s.Hosts {
		p.steps[h] = []hostos.Step{hostos.EtcHosts{Entries: entries}}
	}
	return nil
}
