package container

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
)

// inotify limits count per user, and every host's processes run as this
// machine's uid 0 (the hosts have no user namespace). Each host's systemd,
// user managers, logind and dbus hold about 11-20 inotify instances, and
// the default limit of 128 is shared with everything else root runs here:
// past it, units fail with "Failed to create control group inotify object:
// Too many open files". The limits are raised to what kind and other
// container-node tools recommend. This changes this machine (until reboot)
// and is not undone by Down: another fleet may be using it.
var inotifyMinimums = []struct {
	path string
	min  int
}{
	{"/proc/sys/fs/inotify/max_user_instances", 8192},
	{"/proc/sys/fs/inotify/max_user_watches", 524288},
}

// raiseInotifyLimits raises the inotify limits to the minimums above where
// they are lower, and says so.
func raiseInotifyLimits(log *slog.Logger) error {
	for _, l := range inotifyMinimums {
		b, err := os.ReadFile(l.path)
		if err != nil {
			return fmt.Errorf("read %s: %w", l.path, err)
		}
		cur, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %q: %w", l.path, b, err)
		}
		if cur >= l.min {
			continue
		}
		if err := os.WriteFile(l.path, []byte(strconv.Itoa(l.min)), 0o644); err != nil {
			return fmt.Errorf("fleet hosts need %s >= %d (it is %d) and raising it failed: %w", l.path, l.min, cur, err)
		}
		log.Info(fmt.Sprintf("raised %s from %d to %d: every host's systemd shares root's inotify limit", l.path, cur, l.min))
	}
	return nil
}
