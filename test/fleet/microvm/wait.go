package microvm

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

const (
	pollEvery = 2 * time.Second // an emulated guest's SSH handshake is not free
	// probeTimeout bounds one probe: a guest going down for a reboot can
	// accept a connection and never answer on it.
	probeTimeout = 30 * time.Second
	reportEvery  = 15 * time.Second
)

// readyProbe prints the boot ID, whether the first-boot configuration ran,
// and systemd's view of the boot, in one round trip.
var readyProbe = "cat /proc/sys/kernel/random/boot_id; if test -e " + SeedDoneMarker + "; then echo seeded; else echo unseeded; fi; systemctl is-system-running || true"

// waitReady waits for every guest of f at once until it is ready: its
// first-boot configuration ran, systemd finished booting and, when
// oldBoot names the guest, it is a boot other than that one (a reboot
// happened). Every guest's outcome is reported; the error joins the
// failures, each with the tail of its serial console.
func waitReady(ctx context.Context, f *fleet.Fleet, log *slog.Logger, start time.Time, oldBoot map[string]string) error {
	return backend.WaitAll(f.Hosts, func(h fleet.Host) error {
		return waitGuest(ctx, f, h, log, start, oldBoot[h.Name])
	})
}

func waitGuest(ctx context.Context, f *fleet.Fleet, h fleet.Host, log *slog.Logger, start time.Time, oldBoot string) error {
	gp := pathsOf(f.Dir, h.Name)
	var state string
	lastReport := time.Now()
	for {
		if !backend.Alive(backend.ReadPid(gp.pid)) {
			return fmt.Errorf("%s: qemu exited; serial console (%s):\n%s", h.Name, gp.console, consoleReport(gp.console))
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		out, _, err := f.Run(pctx, h.Name, fleet.UserRoot, readyProbe)
		cancel()
		lines := strings.Fields(out)
		switch {
		case backend.WrongKeys(err):
			// not a matter of time: the guest is not the one the seed made
			return fmt.Errorf("waiting for %s: %w", h.Name, err)
		case err != nil || len(lines) < 3:
			state = "sshd not answering"
		case lines[0] == oldBoot:
			state = "not rebooted yet"
		case lines[1] != "seeded":
			state = "first-boot configuration not done"
		case lines[2] == "running":
			log.Info(fleet.ReadyLine(h.Name, start))
			return nil
		case lines[2] == "degraded":
			failed, _, _ := f.Run(ctx, h.Name, fleet.UserRoot, "systemctl --failed --plain --no-legend --no-pager")
			log.Warn(fmt.Sprintf("%s (degraded; failed units: %s)", fleet.ReadyLine(h.Name, start), strings.Join(strings.Fields(failed), " ")))
			return nil
		default:
			state = "systemd " + lines[2]
		}
		if time.Since(lastReport) >= reportEvery {
			log.Info(fleet.WaitingLine(h.Name, state, start))
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready after %s (%s): %w; serial console (%s):\n%s",
				h.Name, fleet.Since(start), state, ctx.Err(), gp.console, consoleReport(gp.console))
		case <-time.After(pollEvery):
		}
	}
}
