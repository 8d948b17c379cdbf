package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// shapeLink puts this machine behind a link of mbit Mbit/s to the fleet:
// a token bucket on the fleet bridge's own egress, which carries what this
// machine sends to the hosts and nothing the hosts send each other (their
// frames are forwarded port to port inside the bridge). It stands for an
// operator on a slow uplink with hosts on a fast LAN, the case fan-out is
// for. The qdisc goes with the bridge when the fleet goes down.
func shapeLink(ctx context.Context, f *fleet.Fleet, mbit int) error {
	if mbit <= 0 {
		return nil
	}
	if f.Bridge == "" {
		return fmt.Errorf("fleet %s names no bridge to shape", f.Name)
	}
	out, err := exec.CommandContext(ctx, "tc", tbfArgs(f.Bridge, mbit)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("shaping %s to %d Mbit/s: %w: %s", f.Bridge, mbit, err, out)
	}
	return nil
}

// tbfArgs is tc's command line: a bucket of about 10 ms at the rate, and
// up to 100 ms of queue, so the sender sees a link, not drops.
func tbfArgs(dev string, mbit int) []string {
	burst := max(mbit*1000*1000/8/100, 32*1024)
	return []string{"qdisc", "replace", "dev", dev, "root", "tbf",
		"rate", strconv.Itoa(mbit) + "mbit", "burst", strconv.Itoa(burst), "latency", "100ms"}
}
