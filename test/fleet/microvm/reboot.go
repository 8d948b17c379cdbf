package microvm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Reboot reboots guests with systemctl reboot (a clean shutdown, then the
// same kernel and disk again: qemu resets the machine rather than exit) and
// waits until each is up in a new boot.
func (p *Provider) Reboot(ctx context.Context, name string, hosts []string) error {
	dir := p.fleetDir(name)
	st, err := backend.ReadState[vmState](dir)
	if err != nil {
		return fmt.Errorf("fleet %q is not up: %w", name, err)
	}
	f := fleetOf(dir, st)
	subset := *st
	subset.Hosts = nil
	old := map[string]string{}
	for _, n := range hosts {
		h, err := f.Host(n)
		if err != nil {
			return err
		}
		out, _, err := f.Run(ctx, n, fleet.UserRoot, "cat /proc/sys/kernel/random/boot_id")
		if err != nil {
			return fmt.Errorf("%s: before the reboot: %w", n, err)
		}
		old[n] = strings.TrimSpace(out)
		subset.Hosts = append(subset.Hosts, h)
	}
	start := time.Now()
	for _, n := range hosts {
		// the session ends with the guest's sshd; that error is the reboot
		// starting, not failing
		_, _, _ = f.Run(ctx, n, fleet.UserRoot, "systemd-run --on-active=1 --timer-property=AccuracySec=100ms systemctl reboot")
	}
	p.s.log.Info(fmt.Sprintf("rebooting %s of fleet %s", strings.Join(hosts, ", "), name))
	wctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	return waitReady(wctx, fleetOf(dir, &subset), p.s.log, start, old)
}
