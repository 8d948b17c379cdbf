package hostos

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// SwapOff turns swap off now (swapoff -a) and for later boots, by
// commenting out the swap entries of /etc/fstab. The kubelet refuses to
// start with swap on unless told otherwise.
type SwapOff struct {
	// Fstab defaults to /etc/fstab.
	Fstab string
	// Swaps defaults to /proc/swaps.
	Swaps string
}

func (s SwapOff) fstab() string {
	return cmp.Or(s.Fstab, "/etc/fstab")
}

func (s SwapOff) swaps() string {
	return cmp.Or(s.Swaps, "/proc/swaps")
}

// CommentSwap comments out every active swap entry of an fstab (third
// field "swap"), keeping every other byte. It returns the new content and
// the lines it commented out; a second call finds nothing.
func CommentSwap(fstab []byte) ([]byte, []string) {
	lines := strings.SplitAfter(string(fstab), "\n")
	var changed []string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if f := strings.Fields(t); len(f) >= 3 && f[2] == "swap" {
			lines[i] = "#" + l
			changed = append(changed, t)
		}
	}
	return []byte(strings.Join(lines, "")), changed
}

// activeSwaps reads the device column of /proc/swaps (after its header).
func activeSwaps(ctx context.Context, r host.Runner, path string) ([]string, error) {
	data, exists, err := host.ReadFileIfExists(ctx, r, path)
	if err != nil || !exists {
		return nil, err
	}
	var devs []string
	for i, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); i > 0 && len(f) > 0 {
			devs = append(devs, f[0])
		}
	}
	return devs, nil
}

func (s SwapOff) plan(ctx context.Context, r host.Runner) (active []string, fstab []byte, commented []string, c Change, err error) {
	if active, err = activeSwaps(ctx, r, s.swaps()); err != nil {
		return nil, nil, nil, c, err
	}
	if len(active) > 0 {
		c.actionf("swapoff -a (active: %s)", strings.Join(active, ", "))
		for _, d := range active {
			if strings.HasPrefix(d, "/dev/zram") {
				c.warnf("%s is zram swap, which zram-generator creates again at boot; remove zram-generator-defaults or set zram-size = 0 to keep it off", d)
			}
		}
	}
	old, exists, err := host.ReadFileIfExists(ctx, r, s.fstab())
	if err != nil {
		return nil, nil, nil, c, err
	}
	if exists {
		fstab, commented = CommentSwap(old)
		for _, l := range commented {
			c.actionf("comment out %q in %s", l, s.fstab())
		}
	}
	return active, fstab, commented, c, nil
}

// Plan implements Step.
func (s SwapOff) Plan(ctx context.Context, r host.Runner) (Change, error) {
	_, _, _, c, err := s.plan(ctx, r)
	return c, err
}

// Apply implements Step. A swapoff the host refuses (a container sees the
// machine's swap but may not turn it off) is reported in Change.Failed.
func (s SwapOff) Apply(ctx context.Context, r host.Runner) (Change, error) {
	active, fstab, commented, planned, err := s.plan(ctx, r)
	if err != nil {
		return Change{}, err
	}
	c := Change{Warnings: planned.Warnings}
	if len(commented) > 0 {
		if _, err := host.WriteFile(ctx, r, s.fstab(), fstab, 0, ""); err != nil {
			return Change{}, err
		}
		for _, l := range commented {
			c.actionf("comment out %q in %s", l, s.fstab())
		}
	}
	if len(active) == 0 {
		return c, nil
	}
	_, offErr := r.Sudo(ctx, "swapoff -a")
	still, err := activeSwaps(ctx, r, s.swaps())
	if err != nil {
		return Change{}, err
	}
	if len(still) > 0 {
		reason := fmt.Sprintf("still active: %s", strings.Join(still, ", "))
		if offErr != nil {
			reason += ": " + offErr.Error()
		}
		c.Failed = append(c.Failed, Failure{Item: "swap", Reason: reason})
		return c, nil
	}
	c.actionf("swapoff -a (was active: %s)", strings.Join(active, ", "))
	return c, nil
}
