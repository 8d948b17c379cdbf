package microvm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// The built-in guest image's recipe (docs/reference/microvm.md §6).
// Everything that decides what ends up in the image is a field of recipe,
// and recipe.key hashes every field, so a change to any of it makes the
// cached image stale and it is rebuilt instead of silently reused. The
// build steps in image_build.go are covered by Revision: bump it when they
// change what the image holds (revision 2: labelled offline by setfiles,
// no labelling boot).

// recipe is what the built-in image is made of.
type recipe struct {
	Revision string
	Suite    string // the Debian release, by code name: never "stable" or "latest"
	Arch     string
	Variant  string // debootstrap's; the rest comes from Packages
	// Packages are installed with apt-get in the chroot after debootstrap,
	// not with debootstrap's --include, which cannot resolve firewalld's
	// virtual dependency (polkitd needs default-logind, which
	// libpam-systemd provides; §5).
	Packages []string
	Users    []string // useradd -m -s /bin/bash -G sudo, with ~/.ssh 0700
	Files    []backend.RootFile
	// Edits change one line of a packaged file, which must be there.
	Edits    []imageEdit
	Enabled  []string // systemctl enable
	Masked   []string // systemctl mask
	Removed  []string // globs under the root: identity and caches, deleted before mkfs
	Fapolicy fapolicyRecipe
	// Modules are CIL policy modules, by name, installed with semodule.
	Modules map[string]string
	// SizeBytes is the ext4 root filesystem's size.
	SizeBytes int64
	// Cmdline is what every guest boots with.
	Cmdline string
	// FileContexts is the guest policy's file contexts (SELINUXTYPE
	// default), by their path in the guest: the build labels the image
	// with them, running the guest's setfiles offline (image_label.go).
	FileContexts string
}

type imageEdit struct {
	Path, Old, New string // Old is a whole line
}

type fapolicyRecipe struct {
	// SampleRules are copied from /usr/share/fapolicyd/sample-rules into
	// /etc/fapolicyd/rules.d, replacing Debian's lone deny-everything
	// 90-deny-execute.rules: the set the README there names
	// fapolicyd.rules.known-libs.
	SampleRules []string
	// Trust are the paths given to `fapolicyd-cli --file add`: Debian's
	// fapolicyd has no rpm backend, so the file trust database is all it
	// knows of what is installed.
	Trust []string
}

// key is the recipe's cache key: sha256 over every field.
func (r recipe) key() string {
	b, err := json.Marshal(r) // maps are encoded in key order
	if err != nil {
		panic(err) // a recipe is strings and numbers
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Paths of the first-boot unit and the script it runs.
const (
	seedUnit   = "cargoship-seed.service"
	seedScript = "/usr/libexec/cargoship/seed"
	// seedDevice is the seed volume, as udev names it by label; its
	// device unit is what the first-boot unit waits for.
	seedDevice     = "/dev/disk/by-label/" + seedLabel
	seedDeviceUnit = `dev-disk-by\x2dlabel-` + seedLabel + ".device"
	// under /mnt: a directory made there is mnt_t, which the policy lets
	// mount_t mount on; one under /run made by the seed script is
	// initrc_runtime_t, and the mount is denied (observed under
	// enforcing, docs/reference/microvm.md §6)
	seedMount = "/mnt/cargoship-seed"
)

// SeedDoneMarker is the file the first-boot unit creates after the seed
// script ran; the backend waits for it over SSH.
const SeedDoneMarker = "/var/lib/cargoship-seed/done"

// GuestCmdline is the kernel command line every guest boots with. Debian's
// kernel runs AppArmor unless told security=selinux selinux=1 (§5).
const GuestCmdline = "root=/dev/vda rw console=ttyS0 security=selinux selinux=1 enforcing=1"

// sshdRestartDropIn keeps ssh.service starting again until it runs.
const sshdRestartDropIn = `[Unit]
StartLimitIntervalSec=0

[Service]
Restart=always
RestartSec=5
RestartPreventExitStatus=
`

// managerDropIn gives devices as long to appear as slowMachineCmdline
// gives units to start: the seed unit requires its volume's device.
const managerDropIn = `[Manager]
DefaultDeviceTimeoutSec=10min
`

// seedUnitText is the first-boot unit: once per guest, after the root
// filesystem is writable and before anything that reads the identity it
// writes (host keys, hostname, the fleet NIC's address) starts.
// DefaultDependencies=no so it is not itself ordered after sysinit.target,
// which it must precede; multi-user.target pulls it in.
var seedUnitText = `[Unit]
Description=cargoship: this guest's identity from its seed volume (once)
DefaultDependencies=no
ConditionPathExists=!` + SeedDoneMarker + `
Requires=` + seedDeviceUnit + `
After=` + seedDeviceUnit + ` local-fs.target systemd-remount-fs.service
Before=sysinit.target ssh.service fapolicyd.service firewalld.service systemd-networkd.service systemd-hostnamed.service shutdown.target
Conflicts=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + seedScript + `
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
`

// seedScriptText mounts the seed volume read-only, runs its user-data
// (seed.go's firstBootScript) and records that it ran. systemd runs it as
// init_t; executing a bin_t file transitions to initrc_t, which Debian's
// policy makes an unconfined domain, so it may write /etc/ssh, /etc/shadow
// and the rest under enforcing (§6).
var seedScriptText = `#!/bin/sh
# cargoship microvm: run this guest's seed volume once (` + seedUnit + `)
set -eu
mkdir -p ` + seedMount + `
mount -t vfat -o ro ` + seedDevice + ` ` + seedMount + `
trap 'umount ` + seedMount + ` 2>/dev/null || true' EXIT
sh ` + seedMount + `/user-data
umount ` + seedMount + `
trap - EXIT
rmdir ` + seedMount + `
mkdir -p ` + dirOf(SeedDoneMarker) + `
touch ` + SeedDoneMarker + `
if selinuxenabled; then restorecon -R ` + dirOf(SeedDoneMarker) + `; fi
`

func dirOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// fapolicydCIL lets fapolicyd place its fanotify marks. Debian 12's policy
// has no fapolicyd domain: the daemon runs as initrc_t, and as
// unconfined_t when an administrator starts it by hand, and neither may
// watch a mount (§5).
const fapolicydCIL = `; cargoship: fapolicyd on Debian 12, which has no fapolicyd policy module
(allow initrc_t file_type (dir (watch_mount watch_with_perm watch_sb)))
(allow initrc_t file_type (file (watch_mount watch_with_perm watch_sb)))
(allow unconfined_t file_type (dir (watch_mount watch_with_perm watch_sb)))
(allow unconfined_t file_type (file (watch_mount watch_with_perm watch_sb)))
`

// containerDoubleCIL stands in for container-selinux, which Debian 12 does
// not package: the e2e suite labels the k3s and rke2 stand-ins
// container_runtime_exec_t (with semanage fcontext and restorecon, as
// k3s-selinux does on EL) and expects them to run as container_runtime_t.
// Real container-selinux makes container_runtime_t an unconfined domain;
// the double makes it permissive instead, so what the engine double does is
// logged, not denied, without writing that whole policy here.
const containerDoubleCIL = `; cargoship: a test double of container-selinux's types
(type container_runtime_t)
(roletype system_r container_runtime_t)
(roletype unconfined_r container_runtime_t)
(typeattributeset domain (container_runtime_t))
(typepermissive container_runtime_t)

(type container_runtime_exec_t)
(roletype object_r container_runtime_exec_t)
(typeattributeset file_type (container_runtime_exec_t))
(typeattributeset exec_type (container_runtime_exec_t))
(typeattributeset entry_type (container_runtime_exec_t))
(typeattributeset non_auth_file_type (container_runtime_exec_t))
(typeattributeset non_security_file_type (container_runtime_exec_t))

; systemd (init_t) and an administrator's shell (unconfined_t) start the
; engine in its domain
(typetransition init_t container_runtime_exec_t process container_runtime_t)
(allow init_t container_runtime_exec_t (file (getattr open read execute map)))
(allow init_t container_runtime_t (process (transition)))
(typetransition unconfined_t container_runtime_exec_t process container_runtime_t)
(allow unconfined_t container_runtime_exec_t (file (getattr open read execute map)))
(allow unconfined_t container_runtime_t (process (transition)))
(allow container_runtime_t container_runtime_exec_t (file (entrypoint getattr open read execute map)))

(type container_var_lib_t)
(roletype object_r container_var_lib_t)
(typeattributeset file_type (container_var_lib_t))
(typeattributeset non_auth_file_type (container_var_lib_t))
(typeattributeset non_security_file_type (container_var_lib_t))

(type container_file_t)
(roletype object_r container_file_t)
(typeattributeset file_type (container_file_t))
(typeattributeset non_auth_file_type (container_file_t))
(typeattributeset non_security_file_type (container_file_t))
`

// Names of the CIL modules; semodule -l lists them so.
const (
	fapolicydModule       = "cargoship-fapolicyd"
	containerDoubleModule = "cargoship-container-selinux-double"
	firewalldModule       = "cargoship-firewalld"
)

// firewalldCIL lets firewalld answer an administrator. Debian 12's policy
// lets firewall-cmd, run from root's unconfined shell, call firewalld_t
// over D-Bus but denies firewalld_t's reply (send_msg to unconfined_t), so
// every firewall-cmd waits 25 s and fails with NoReply while firewalld
// runs (observed under enforcing; docs/reference/microvm.md §6). Fedora's
// policy allows it. Its Python's libffi executes closures from a memfd
// (firewalld_tmpfs_t), which is denied too.
const firewalldCIL = `; cargoship: firewall-cmd's replies on Debian 12
(allow firewalld_t unconfined_t (dbus (send_msg)))
(allow firewalld_t firewalld_tmpfs_t (file (execute)))
`

// builtinRecipe is the recipe of the image EnsureImage builds.
func builtinRecipe() recipe {
	return recipe{
		Revision: "2",
		Suite:    "bookworm",
		Arch:     "amd64",
		Variant:  "minbase",
		// The container fleet's host packages (test/fleet/rootfs.go, less
		// ufw), a kernel, and the SELinux, audit and fapolicyd tools.
		Packages: []string{
			"linux-image-amd64", "systemd-sysv", "dbus", "libpam-systemd",
			"openssh-server", "sudo", "iproute2", "nftables", "iptables", "procps",
			"ca-certificates", "python3", "iputils-ping", "kmod", "less", "curl",
			"conntrack", "socat", "ipset", "firewalld", "fapolicyd",
			"selinux-policy-default", "selinux-utils", "policycoreutils",
			"policycoreutils-python-utils", "auditd", "e2fsprogs", "zstd", "tar", "gzip",
		},
		Users: []string{fleet.UserTester, fleet.UserSudoPassword},
		Files: []backend.RootFile{
			{Path: "etc/fstab", Mode: 0o644, Content: "/dev/vda / ext4 defaults 0 1\n"},
			{Path: "etc/selinux/config", Mode: 0o644, Content: "SELINUX=enforcing\nSELINUXTYPE=default\n"},
			// Empty: systemd makes a machine-id at each guest's first boot.
			{Path: "etc/machine-id", Mode: 0o444, Content: ""},
			// No DNS by design, as on the container fleet: names come from
			// /etc/hosts, and a resolver fails fast.
			{Path: "etc/resolv.conf", Mode: 0o644, Content: "nameserver 127.0.0.1\n"},
			{Path: "etc/ssh/sshd_config.d/fleet.conf", Mode: 0o644, Content: "UseDNS no\n"},
			// sshd is the fleet's only way in: started again after any
			// failure, without end, where Debian's unit gives up on exit
			// 255 or after five tries (CI saw it fail twice at boot on a
			// loaded machine and the guest stay unreachable)
			{Path: "etc/systemd/system/ssh.service.d/10-cargoship.conf", Mode: 0o644, Content: sshdRestartDropIn},
			// systemd waits 90 s for a device, whatever the kernel command
			// line's default_timeout_start_sec says (systemd 252 has no
			// command-line switch for it); a loaded CI machine's guest
			// found its seed volume later than that, the seed unit failed,
			// no host keys were written, and sshd failed without end
			{Path: "etc/systemd/system.conf.d/10-cargoship.conf", Mode: 0o644, Content: managerDropIn},
			{Path: "etc/sudoers.d/tester", Mode: 0o440, Content: fleet.UserTester + " ALL=(ALL) NOPASSWD:ALL\n"},
			// management: qemu's slirp hands out 10.0.2.15; the fleet NIC's
			// file is written by the seed
			{Path: "etc/systemd/network/10-mgmt.network", Mode: 0o644, Content: "[Match]\nName=enp0s3\n\n[Network]\nDHCP=ipv4\n"},
			// network-online.target waits for the management link only: the
			// fleet NIC's segment may have nobody else on it
			{Path: "etc/systemd/system/systemd-networkd-wait-online.service.d/10-cargoship.conf", Mode: 0o644,
				Content: "[Service]\nExecStart=\nExecStart=/lib/systemd/systemd-networkd-wait-online --interface=enp0s3 --timeout=120\n"},
			{Path: "etc/systemd/system/" + seedUnit, Mode: 0o644, Content: seedUnitText},
			{Path: seedScript[1:], Mode: 0o755, Content: seedScriptText},
		},
		Edits: []imageEdit{
			// without rpm support this falls back to the file backend anyway;
			// saying so keeps fapolicyd from warning at each start
			{"etc/fapolicyd/fapolicyd.conf", "trust = rpmdb,file", "trust = file"},
		},
		Enabled: []string{
			"systemd-networkd.service", "ssh.service", "fapolicyd.service",
			"firewalld.service", "auditd.service", seedUnit,
		},
		Masked: []string{
			// the guests have no route to a mirror
			"apt-daily.timer", "apt-daily-upgrade.timer",
			// needs LVM the guests do not have
			"e2scrub_reap.service",
			// it marks a relabel when SELinux is off; labelling is the build's
			"selinux-autorelabel-mark.service",
			// ifupdown, should anything pull it in: networkd owns the NICs
			"networking.service",
		},
		Removed: []string{
			"etc/ssh/ssh_host_*", "etc/hostname", "var/lib/dbus/machine-id",
			"var/lib/apt/lists/*", "var/cache/apt/*.bin", "usr/sbin/policy-rc.d",
		},
		Fapolicy: fapolicyRecipe{
			SampleRules: []string{
				"10-languages.rules", "20-dracut.rules", "21-updaters.rules", "30-patterns.rules",
				"40-bad-elf.rules", "41-shared-obj.rules", "42-trusted-elf.rules",
				"70-trusted-lang.rules", "72-shell.rules", "90-deny-execute.rules", "95-allow-open.rules",
			},
			Trust: []string{"/usr/"},
		},
		Modules: map[string]string{
			fapolicydModule:       fapolicydCIL,
			containerDoubleModule: containerDoubleCIL,
			firewalldModule:       firewalldCIL,
		},
		SizeBytes:    3 << 30,
		Cmdline:      GuestCmdline,
		FileContexts: "/etc/selinux/default/contexts/files/file_contexts",
	}
}
