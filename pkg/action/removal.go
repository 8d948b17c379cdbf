package action

import "github.com/colonel-byte/cargoship/pkg/phase"

// ApplyAfterReset is apply's phase list for a dry run that a reset of the
// leaving hosts precedes in the same change (the provider's plan): the
// check that stops on cluster nodes missing from the inventory is left
// out, since those are the nodes the reset takes out first.
func ApplyAfterReset() []phase.Phase {
	var out []phase.Phase
	for _, p := range ApplyPhases() {
		if _, removed := p.(*phase.RemovedNodes); !removed {
			out = append(out, p)
		}
	}
	return out
}
