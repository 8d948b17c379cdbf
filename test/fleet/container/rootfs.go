package container

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/backend"
)

// Image kinds a Spec can ask for.
const (
	ImageBase  = "base"  // systemd, sshd, sudo, nftables, python3
	ImageExtra = "extra" // base plus firewalld, ufw, fapolicyd, iptables, ... (services disabled)
)

// Image is a verified pair of read-only rootfs layers in the user cache.
// Hosts never copy them: each host mounts an overlay whose lower layers are
// these directories, top first.
type Image struct {
	Base  string // debootstrap minbase + the fleet's configuration
	Extra string // overlay upper dir on top of Base holding the extra packages
}

// Lowers returns the overlay lowerdir list (top first) for an image kind.
func (im Image) Lowers(kind string) ([]string, error) {
	switch kind {
	case ImageBase:
		return []string{im.Base}, nil
	case ImageExtra, "":
		return []string{im.Extra, im.Base}, nil
	}
	return nil, fmt.Errorf("unknown image %q (want %q or %q)", kind, ImageBase, ImageExtra)
}

// The recipe. Everything that decides what ends up in a layer is listed here
// and hashed into the layer's version, so changing any of it makes the cached
// layer stale and it is rebuilt instead of silently reused.
const (
	// recipeRevision covers the build steps in code below: bump it when
	// they change what a layer contains.
	recipeRevision = "2"
	guestSuite     = "bookworm"
	// buildMachine is the nspawn machine name used while installing the
	// extra packages; it names the runtime dir nspawn leaves behind.
	buildMachine = "cs-rootfs-build"
)

var (
	baseInclude = []string{
		"systemd", "systemd-sysv", "dbus", "openssh-server", "sudo", "iproute2",
		"nftables", "procps", "ca-certificates", "python3", "iputils-ping", "kmod", "less",
	}
	extraPackages = []string{
		"firewalld", "ufw", "fapolicyd", "iptables", "conntrack", "socat", "ipset", "curl",
	}
	// A fresh fleet host has the packages and none of their services: the
	// tool under test enables what it needs, and a gate that asks "is
	// firewalld running?" must be able to see "no".
	extraDisabled = []string{"firewalld.service", "ufw.service", "fapolicyd.service"}
	// apt timers would try to reach a network the hosts do not have;
	// e2scrub needs LVM the hosts do not have.
	baseMasked = []string{"apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_reap.service"}
	// Users every host has. Their authorized_keys are written per fleet.
	fleetUsers = []string{fleet.UserTester, fleet.UserSudoPassword}
	// Modules this kernel has built in; a fake modules.builtin lets
	// `modprobe br_netfilter` succeed the way it would on a real host.
	fakeBuiltinModules = []string{
		"kernel/net/bridge/br_netfilter.ko", "kernel/fs/overlayfs/overlay.ko",
		"kernel/net/netfilter/nf_conntrack.ko", "kernel/net/ipv4/netfilter/ip_tables.ko",
		"kernel/net/bridge/bridge.ko", "kernel/drivers/net/veth.ko", "kernel/drivers/net/vxlan/vxlan.ko",
	}
	// baseFiles are written into the base layer verbatim.
	baseFiles = []backend.RootFile{
		// The stock unit runs `sshd -t` before any host key exists; the
		// drop-in generates missing keys first (a no-op when the harness
		// has installed the cached per-host keys, which it always does).
		{Path: "etc/systemd/system/ssh.service.d/10-hostkeys.conf", Mode: 0o644,
			Content: "[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n"},
		{Path: "etc/ssh/sshd_config.d/fleet.conf", Mode: 0o644, Content: "UseDNS no\n"},
		{Path: "etc/sudoers.d/tester", Mode: 0o440, Content: fleet.UserTester + " ALL=(ALL) NOPASSWD:ALL\n"},
		// No DNS by design; a placeholder so resolvers fail fast.
		{Path: "etc/resolv.conf", Mode: 0o644, Content: "nameserver 127.0.0.1\n"},
		// Empty: systemd makes a fresh machine-id on every host's boot.
		{Path: "etc/machine-id", Mode: 0o444, Content: ""},
	}
)

// kernelRelease is part of the base recipe because the fake modules
// directory is named after the running kernel.
func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// baseVersion and extraVersion hash the recipe inputs. The extra layer's
// version includes the base's: an upper dir is only valid on the exact lower
// it was built against.
func baseVersion() string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "rev=%s\nsuite=%s\nvariant=minbase\ninclude=%s\nmasked=%s\nusers=%s\nmodules=%s\nkernel=%s\n",
		recipeRevision, guestSuite, strings.Join(baseInclude, ","), strings.Join(baseMasked, ","),
		strings.Join(fleetUsers, ","), strings.Join(fakeBuiltinModules, ","), kernelRelease())
	for _, f := range baseFiles {
		_, _ = fmt.Fprintf(h, "file=%s mode=%o\n%s\n", f.Path, f.Mode, f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func extraVersion() string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "rev=%s\nbase=%s\npackages=%s\ndisabled=%s\n",
		recipeRevision, baseVersion(), strings.Join(extraPackages, ","), strings.Join(extraDisabled, ","))
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// layerChecks are paths (relative to the layer) that must exist in a usable
// layer. Each entry lists alternatives. They catch a layer that was built but
// is not what the recipe says (an apt step that half failed, a cache restored
// from somewhere else), which the stamp alone cannot.
var baseChecks = [][]string{
	{"usr/lib/systemd/systemd"},
	{"usr/sbin/sshd"},
	{"usr/bin/sudo"},
	{"usr/sbin/nft"},
	{"usr/bin/python3"},
	{"usr/bin/ip", "usr/sbin/ip"},
	{"usr/bin/ping"},
	{"usr/bin/ssh-keygen"},
	{"usr/sbin/chpasswd"},
	{"etc/systemd/system/ssh.service.d/10-hostkeys.conf"},
	{"etc/sudoers.d/tester"},
	{"home/tester/.ssh"},
	{"home/sudopw/.ssh"},
}

var extraChecks = [][]string{
	{"usr/sbin/firewalld"},
	{"usr/sbin/ufw"},
	{"usr/sbin/fapolicyd"},
	{"usr/sbin/xtables-nft-multi"},
	{"usr/sbin/conntrack"},
	{"usr/bin/socat"},
	{"usr/sbin/ipset"},
	{"usr/bin/curl"},
}

func verifyLayer(dir string, checks [][]string) error {
	var missing []string
	for _, alts := range checks {
		found := false
		for _, p := range alts {
			if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, alts[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("layer %s is missing %s", dir, strings.Join(missing, ", "))
	}
	return nil
}

// stamp is written next to a layer once it is complete and verified. A layer
// without a stamp whose version matches is a half-built or stale one.
type stamp struct {
	Version string    `json:"version"`
	Built   time.Time `json:"built"`
	Mirror  string    `json:"mirror"`
	Seconds float64   `json:"buildSeconds"`
}

func readStamp(path string) (stamp, error) {
	var s stamp
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// EnsureImage builds (if missing or stale) and verifies the container
// backend's rootfs layers.
func EnsureImage(ctx context.Context, opts fleet.Options) (Image, error) {
	o, err := opts.WithDefaults()
	if err != nil {
		return Image{}, err
	}
	b := &imageBuilder{cache: o.CacheDir, log: o.Logger}
	return b.ensure(ctx)
}
