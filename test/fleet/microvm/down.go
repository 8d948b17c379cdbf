package microvm

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Down stops every guest of a fleet and removes its directory: no qemu
// process and no file under build/microvm/FLEET is left. Down of a fleet
// that is not up does nothing.
func (p *Provider) Down(ctx context.Context, name string) error {
	lock, err := p.lock(ctx, name)
	if err != nil {
		return err
	}
	defer lock.Release()
	return p.down(ctx, name)
}

func (p *Provider) down(_ context.Context, name string) error {
	dir := p.fleetDir(name)
	pids := qemuPIDs(p.s.stateDir, name)
	if st, err := backend.ReadState[vmState](dir); err == nil {
		for _, h := range st.Hosts {
			if pid := backend.ReadPid(pathsOf(dir, h.Name).pid); backend.Alive(pid) {
				pids[h.Name] = pid
			}
		}
	}
	stop(slices.Collect(maps.Values(pids)), 5*time.Second)
	if left := qemuPIDs(p.s.stateDir, name); len(left) > 0 {
		return fmt.Errorf("fleet %q: qemu still running for %v after SIGKILL", name, slices.Sorted(maps.Keys(left)))
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("fleet %q: %w", name, err)
	}
	if n := len(pids); n > 0 {
		p.s.log.Info(fmt.Sprintf("fleet %s down: stopped %d guest(s), removed %s", name, n, dir))
	}
	return nil
}

// running names the guests of a fleet whose qemu runs.
func (p *Provider) running(name string) []string {
	return slices.Sorted(maps.Keys(qemuPIDs(p.s.stateDir, name)))
}
