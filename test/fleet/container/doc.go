// Package container is the fleet's container backend: each host is a
// systemd-nspawn container with systemd as PID 1, on an overlay over cached
// Debian rootfs layers (EnsureImage), in its own network namespace with a
// veth on a per-fleet bridge. Importing it registers it with package fleet
// as "container", the default backend; what every backend shares (types,
// keys, inventory, SSH) stays in test/fleet. See docs/fleet.md.
package container
