package container

import (
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// hostsDir holds the hosts' own files in a fleet's directory, beside the
// state file (backend.StateFile) and the ones every backend writes
// (fleet.NewFleet).
const hostsDir = "hosts"

// fleetState is what Up records about a fleet, written before any host
// resource is created so a Down after a crash knows what to remove. Down
// does not depend on it, though: everything is also found by name prefix.
type fleetState struct {
	Name         string       `json:"name"`
	Backend      string       `json:"backend"`
	Image        string       `json:"image"`
	Lowers       []string     `json:"lowers"`
	Octet        int          `json:"octet"`
	Bridge       string       `json:"bridge"`
	SudoPassword string       `json:"sudoPassword"`
	Created      time.Time    `json:"created"`
	Hosts        []fleet.Host `json:"hosts"`
	// Left out when false, so a plain fleet's state reads as before.
	NodeRuntime bool `json:"nodeRuntime,omitempty"`
	// Empty for the container backend (eth0).
	PrivateInterface string `json:"privateInterface,omitempty"`
}

// fleetFromState is the public view of a recorded fleet.
func fleetFromState(dir string, st *fleetState) *fleet.Fleet {
	f := fleet.NewFleet(dir, st.Name, st.Backend, st.Hosts, st.SudoPassword, st.PrivateInterface)
	f.Subnet = subnetCIDR(st.Octet)
	f.Gateway = gatewayAddr(st.Octet)
	f.Bridge = st.Bridge
	f.NodeRuntime = st.NodeRuntime
	return f
}
