package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

var _ fleet.PowerSwitch = (*Container)(nil)

// PowerOff cuts a container host's power. Its link on the bridge goes down
// first, so nothing the kernel closes for its dying processes reaches a
// peer: a client sees a silent host, not a closed connection. Then the
// supervisor loop is killed (or it would boot the host again), then every
// process in the host's cgroups and network namespace. The overlay, the
// namespace and the veth stay, so PowerOn boots the same disk.
func (c *Container) PowerOff(ctx context.Context, name, host string) error {
	f, h, p, err := c.hostOf(ctx, name, host)
	if err != nil {
		return err
	}
	if _, err := command(ctx, "ip", "link", "set", vethName(f.Name, h.Name), "down"); err != nil {
		return fmt.Errorf("%s: pulling the cord: %w", h.Name, err)
	}
	netns := netnsName(f.Name, h.Name)
	var pids []int
	if loop := backend.ReadPid(p.pid); backend.Alive(loop) {
		_ = syscall.Kill(loop, syscall.SIGKILL)
		pids = append(pids, loop)
	}
	for _, dir := range findCgroups(netns) {
		got := cgroupPids(dir)
		pids = append(pids, got...)
		if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) != nil {
			for _, pid := range got {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for _, pid := range procsInNetns([]string{netns}) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		pids = append(pids, pid)
	}
	if !backend.WaitGone(pids, 10*time.Second) {
		return fmt.Errorf("%s: processes still alive 10s after SIGKILL", h.Name)
	}
	c.opts.Logger.Info(fmt.Sprintf("powered off %s of fleet %s (%d process(es) killed)", h.Name, f.Name, len(pids)))
	return nil
}

// PowerOn boots a host PowerOff took down: the link comes up, what the
// killed nspawn left in the host's cgroups is cleared, and the supervisor
// loop starts again on the same overlay. It returns once the host is ready
// as Up counts it (SSH with the pinned key, systemd running).
func (c *Container) PowerOn(ctx context.Context, name, host string) error {
	f, h, p, err := c.hostOf(ctx, name, host)
	if err != nil {
		return err
	}
	if pid := backend.ReadPid(p.pid); backend.Alive(pid) {
		return fmt.Errorf("%s is not powered off (its supervisor, pid %d, runs)", h.Name, pid)
	}
	if !isMounted(p.merged) {
		return fmt.Errorf("%s: its disk (%s) is not mounted: the fleet was taken down, not one host", h.Name, p.merged)
	}
	netns := netnsName(f.Name, h.Name)
	for _, dir := range findCgroups(netns) {
		if err := removeCgroupChildren(dir); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
	}
	if _, err := command(ctx, "ip", "link", "set", vethName(f.Name, h.Name), "up"); err != nil {
		return fmt.Errorf("%s: link up: %w", h.Name, err)
	}
	start := time.Now()
	pid, err := startHost(p, netns, h, f.NodeRuntime)
	if err != nil {
		return err
	}
	if err := waitHost(ctx, f, h, p, pid, c.opts.Logger, start); err != nil {
		return err
	}
	c.opts.Logger.Info(fmt.Sprintf("powered on %s of fleet %s in %s", h.Name, f.Name, fleet.Since(start)))
	return nil
}

// hostOf finds a host of a fleet that is up, and its files.
func (c *Container) hostOf(ctx context.Context, name, host string) (*fleet.Fleet, fleet.Host, hostPaths, error) {
	f, err := c.Get(ctx, name)
	if err != nil {
		return nil, fleet.Host{}, hostPaths{}, err
	}
	h, err := f.Host(host)
	if err != nil {
		return nil, fleet.Host{}, hostPaths{}, err
	}
	return f, h, pathsFor(f.Dir, h.Name), nil
}

// removeCgroupChildren removes the (empty) cgroups under dir, deepest
// first, and keeps dir: the next supervisor loop moves itself into it.
func removeCgroupChildren(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if err := removeCgroupChildren(sub); err != nil {
			return err
		}
		var rmErr error
		for range 20 { // released a moment after its last process is reaped
			if rmErr = os.Remove(sub); rmErr == nil || errors.Is(rmErr, os.ErrNotExist) {
				rmErr = nil
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if rmErr != nil {
			return fmt.Errorf("remove cgroup %s: %w", sub, rmErr)
		}
	}
	return nil
}

// Throttle limits what this machine sends a container host to
// bytesPerSecond (a token bucket on the host's veth, this machine's side),
// so a test can catch an upload in the middle; 0 lifts the limit.
func (c *Container) Throttle(ctx context.Context, name, host string, bytesPerSecond int) error {
	f, h, _, err := c.hostOf(ctx, name, host)
	if err != nil {
		return err
	}
	veth := vethName(f.Name, h.Name)
	if bytesPerSecond <= 0 {
		out, err := command(ctx, "tc", "qdisc", "show", "dev", veth, "root")
		if err != nil || !strings.Contains(out, "tbf") {
			return err // no limit to lift
		}
		_, err = command(ctx, "tc", "qdisc", "del", "dev", veth, "root")
		return err
	}
	rate := strconv.Itoa(bytesPerSecond*8) + "bit"
	if _, err := command(ctx, "tc", "qdisc", "replace", "dev", veth, "root", "tbf", "rate", rate, "burst", "32kb", "latency", "400ms"); err != nil {
		return fmt.Errorf("%s: throttle: %w", h.Name, err)
	}
	return nil
}
