// Package hostos knows the operating systems cargoship prepares: it reads
// os-release to pick a family, gives one Configurer per family (package
// installs from uploaded files, services, SELinux and fapolicyd probes),
// and holds the host preparation steps of phases 8 to 12 (sysctl, kernel
// modules, swap, /etc/environment, /etc/hosts, fapolicyd, SELinux).
//
// The directory is pkg/host/os; the package is named hostos so it never
// shadows the standard library's os.
//
// Every step has a read-only Plan and an Apply; both return a Change, and
// Apply on a host already in the desired state changes nothing and says so.
//
// Install routes (selector.package): enterpriselinux takes rpm, debian takes
// apt, everything else takes binary. SUSE deliberately takes binary too,
// although it installs rpm files with zypper: the rpm files distro
// definitions carry are Enterprise Linux builds (el8/el9 in their names) and
// phase 15 is defined for Enterprise Linux hosts. The SUSE configurer still
// installs local rpm files (zypper, no remote repositories) for callers
// that choose files built for SUSE.
package hostos
