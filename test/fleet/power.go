package fleet

import "context"

// PowerSwitch is a backend that can cut one host's power and restore it,
// for tests of what a host going away mid-run leaves behind.
type PowerSwitch interface {
	// PowerOff cuts the host's power: it goes silent on the network at
	// once (no FIN, no RST), as a machine whose cord is pulled, and every
	// process of it dies. Its disk stays as it was.
	PowerOff(ctx context.Context, fleet, host string) error
	// PowerOn boots a powered-off host and waits until it is ready.
	PowerOn(ctx context.Context, fleet, host string) error
}
