// Package microvm is the fleet backend that runs each host as a qemu virtual
// machine with a kernel of its own, for what a container host cannot show:
// SELinux enforcing, fapolicyd, global sysctls, kernel modules, reboots
// (docs/vm-fleet.md).
//
// Importing the package registers the backend with test/fleet as
// "microvm". No daemon and no root run the guests (building the image
// needs root: debootstrap):
//   - preflight: the tools it needs, KVM or TCG, whether the guests fit in
//     memory;
//   - the built-in image: Debian 12 from this machine's apt mirror, SELinux
//     enforcing and labelled at build time, fapolicyd trusting what is
//     installed, firewalld; cached by recipe hash;
//   - each guest: a qcow2 overlay over the image, a NoCloud seed volume
//     whose first-boot script writes its identity before sshd starts,
//     direct kernel boot, a slirp management NIC with SSH forwarded from
//     the loopback, and the fleet's own L2 segment on a multicast socket;
//   - Up, Down, List, Shell, Reboot, and a QMP client.
package microvm
