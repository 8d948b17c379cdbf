package node

import (
	"context"
	"fmt"

	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// Relabel gives installed paths the SELinux label the policy's file
// contexts name for them, on a host where SELinux is enabled (enforcing or
// permissive). A rename keeps the label a file was created with, so a
// binary moved into place is bin_t where the k3s and rke2 policies want
// container_runtime_exec_t, and containerd cannot run it
// (docs/reference/hosts.md §6.4). A failure is an error, as in k3s's own
// installer: the engine would not start. Elsewhere it does nothing.
func Relabel(ctx context.Context, h *Host, paths ...string) error {
	if len(paths) == 0 || !hostos.IsSELinuxEnabled(h.Facts.SELinux) {
		return nil
	}
	if _, err := h.Conn.Sudo(ctx, host.Script(`restorecon "$@"`, paths...)); err != nil {
		return fmt.Errorf("restoring the SELinux labels of %v: %w", paths, err)
	}
	return nil
}
