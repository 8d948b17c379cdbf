package microvm

import (
	"context"
	"fmt"
	"net"
)

// createOverlay makes disk a qcow2 overlay over the raw image base: the
// guest writes only to its overlay, so guests share one image and a
// bring-up costs megabytes. base is named absolute with its format, as
// qemu-img refuses to guess a backing file's format.
func createOverlay(ctx context.Context, base, disk string) error {
	if err := run(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", base, disk); err != nil {
		return fmt.Errorf("overlay %s over %s: %w", disk, base, err)
	}
	return nil
}

// freeLoopbackPort asks the kernel for a port on 127.0.0.1 nobody holds,
// for a guest's SSH forward. qemu binds it moments later; a port taken in
// between fails qemu's start with a clear error rather than crossing guests.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
