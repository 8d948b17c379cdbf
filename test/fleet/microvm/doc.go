// Package microvm is the fleet backend that runs each host as a qemu virtual
// machine with a kernel of its own, for what a container host cannot show:
// SELinux enforcing, fapolicyd, global sysctls, kernel modules, reboots.
//
// It is being built in steps. What is here so far:
//   - the bring-up's preflight: the tools it needs, whether qemu can use
//     KVM or must emulate with TCG, whether the guests fit in memory;
//   - each guest's first-boot script (its identity, written before sshd
//     starts) on a NoCloud seed volume made without root;
//   - each guest's qemu command line: direct kernel boot, a copy-on-write
//     disk, the seed volume, a slirp management NIC with SSH forwarded from
//     the loopback, and the fleet's own L2 segment on a multicast socket;
//   - each guest's qcow2 overlay over the shared raw image, and a free
//     loopback port for its SSH forward;
//   - a QMP client: pause, resume, reset and quit a guest from outside.
//
// The backend is not registered with test/fleet until it brings guests up.
package microvm
