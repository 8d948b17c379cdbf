package container

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

const (
	pollEvery   = 250 * time.Millisecond
	reportEvery = 5 * time.Second
)

// waitReady waits for every host at once (the wall time is the slowest
// host, not the sum) until it is ready, or ctx ends. Every host's outcome is
// reported; the error joins the failures.
func waitReady(ctx context.Context, f *fleet.Fleet, paths map[string]hostPaths, pids map[string]int, log *slog.Logger, start time.Time) error {
	return backend.WaitAll(f.Hosts, func(h fleet.Host) error {
		return waitHost(ctx, f, h, paths[h.Name], pids[h.Name], log, start)
	})
}

// waitHost waits until a host answers SSH - a real handshake with the fleet
// key against the cached host key - and its systemd reports the boot
// finished. sshd answers a second or so before systemd is done, and a test
// that starts then races units still starting.
func waitHost(ctx context.Context, f *fleet.Fleet, h fleet.Host, p hostPaths, pid int, log *slog.Logger, start time.Time) error {
	var client *ssh.Client
	defer func() {
		if client != nil {
			_ = client.Close()
		}
	}()
	state := "sshd not answering"
	lastReport := time.Now()
	for {
		if !backend.Alive(pid) {
			return fmt.Errorf("%s: systemd-nspawn exited during boot; console (%s):\n%s", h.Name, p.console, consoleTail(p, 2000))
		}
		if client == nil {
			c, err := f.Dial(ctx, h.Name, fleet.UserRoot)
			if err == nil {
				client = c
			} else {
				state = "sshd not answering"
				if backend.WrongKeys(err) {
					// Not a timing problem: waiting longer will not help.
					return fmt.Errorf("waiting for %s: %w", h.Name, err)
				}
			}
		}
		if client != nil {
			out, _, err := fleet.RunOn(ctx, client, h.Name, fleet.UserRoot, "", "systemctl is-system-running")
			sys := strings.TrimSpace(out)
			switch {
			case sys == "running":
				log.Info(fleet.ReadyLine(h.Name, start))
				return nil
			case sys == "degraded":
				failed, _, _ := fleet.RunOn(ctx, client, h.Name, fleet.UserRoot, "", "systemctl --failed --plain --no-legend --no-pager")
				log.Warn(fmt.Sprintf("%s (degraded; failed units: %s)", fleet.ReadyLine(h.Name, start), strings.Join(strings.Fields(failed), " ")))
				return nil
			case sys == "initializing" || sys == "starting":
				state = "systemd " + sys
			case sys != "":
				state = "systemd " + sys
			default:
				// The connection broke (host rebooting?); dial again.
				state = fmt.Sprintf("ssh session failed: %v", err)
				_ = client.Close()
				client = nil
			}
		}
		if time.Since(lastReport) >= reportEvery {
			log.Info(fleet.WaitingLine(h.Name, state, start))
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready after %s (%s): %w; inside the host:\n%s",
				h.Name, fleet.Since(start), state, ctx.Err(), diagnoseHost(f.Name, h.Name))
		case <-time.After(pollEvery):
		}
	}
}
