package cluster

import (
	"fmt"
	"slices"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// views are the two ways the suite reads one inventory (docs/e2e.md,
// CARGOSHIP_E2E_JOIN_HOST): the apply walk's view holds every host except
// the join host, the join walk's view holds all of them.
type views struct {
	Apply *v1alpha1.Cluster
	All   *v1alpha1.Cluster
	// Join is the held-out host's hostname, "" when there is none.
	Join string
}

// holdOut splits an inventory around the join host. Both ways naming it can
// go wrong are refused here, before any host is touched.
func holdOut(c *v1alpha1.Cluster, join string) (views, error) {
	v := views{All: c, Apply: c, Join: join}
	if join == "" {
		return v, nil
	}
	idx := slices.IndexFunc(c.Spec.Hosts, func(h v1alpha1.Host) bool { return h.Hostname == join })
	if idx < 0 {
		var names []string
		for _, h := range c.Spec.Hosts {
			names = append(names, h.Hostname)
		}
		return views{}, fmt.Errorf("%s=%s: the inventory has no host with that hostname (it has %v); name the hostname field, not the address", envJoinHost, join, names)
	}
	if len(c.Spec.Hosts) == 1 {
		return views{}, fmt.Errorf("%s=%s: it is the only host of the inventory, so there is no cluster for it to join", envJoinHost, join)
	}
	apply := *c
	apply.Spec.Hosts = slices.Delete(slices.Clone(c.Spec.Hosts), idx, idx+1)
	if countsFor(&apply).Controllers == 0 {
		return views{}, fmt.Errorf("%s=%s: without it the inventory has no controller to install", envJoinHost, join)
	}
	v.Apply = &apply
	return v, nil
}

// checkSuiteInventory holds a user's inventory to what the suite needs
// (docs/e2e.md, Backends): a controller, a role and a privateAddress on
// every host.
func checkSuiteInventory(c *v1alpha1.Cluster) error {
	if countsFor(c).Controllers == 0 {
		return fmt.Errorf("the inventory has no host with a controller role: there is no control plane to install")
	}
	for i, h := range c.Spec.Hosts {
		if h.Hostname == "" {
			return fmt.Errorf("spec.hosts[%d]: the suite needs hostname on every host (it names hosts in assertions and CARGOSHIP_E2E_JOIN_HOST)", i)
		}
		if h.PrivateAddress == "" {
			return fmt.Errorf("spec.hosts[%d] (%s): the suite needs privateAddress on every host; the firewall and /etc/hosts phases distribute it to every peer", i, h.Hostname)
		}
	}
	return nil
}
