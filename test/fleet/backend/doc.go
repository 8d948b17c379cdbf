// Package backend is what the fleet's backends (test/fleet/container,
// test/fleet/microvm) share in how they keep and watch their hosts: a
// fleet's state file, the processes its hosts run as, the files written
// into a host's root, what List reports, the wait for every host to boot
// and the shell on one. Package fleet holds what a fleet is; this package
// is for the backends only.
package backend
