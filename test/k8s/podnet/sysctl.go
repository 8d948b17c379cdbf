package podnet

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// EnsureIPForward turns on IPv4 forwarding in the network namespace of
// the calling thread (the host's, for a hostNetwork pod) if it is off,
// through procDir (/proc) /sys/net/ipv4/ip_forward. It reports whether it
// changed it. kubeadm's preflight already demands forwarding on, so the
// write is rarely needed; where it is and /proc/sys is read-only (an
// unprivileged container), the error says so and the node cannot forward
// pod traffic.
func EnsureIPForward(procDir string) (bool, error) {
	path := filepath.Join(procDir, "sys", "net", "ipv4", "ip_forward")
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read net.ipv4.ip_forward: %w", err)
	}
	if string(bytes.TrimSpace(b)) == "1" {
		return false, nil
	}
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		return false, fmt.Errorf("set net.ipv4.ip_forward=1 (it is %s): %w", bytes.TrimSpace(b), err)
	}
	return true, nil
}
