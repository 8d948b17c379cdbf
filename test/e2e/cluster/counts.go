package cluster

import "github.com/colonel-byte/cargoship/pkg/api/v1alpha1"

// counts are the host counts assertions compare against. They are derived
// from whichever inventory the run selected, never written down, so the
// stage and full inventories cannot silently disagree with them.
type counts struct {
	Hosts       int
	Controllers int
	Workers     int
	Infra       int // workers whose profile is infra
}

// countsFor reads the counts off an inventory's roles and profiles.
func countsFor(c *v1alpha1.Cluster) counts {
	var n counts
	for i := range c.Spec.Hosts {
		h := &c.Spec.Hosts[i]
		n.Hosts++
		if h.IsController() {
			n.Controllers++
			continue
		}
		n.Workers++
		if h.Profile == "infra" {
			n.Infra++
		}
	}
	return n
}
