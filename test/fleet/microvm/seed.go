package microvm

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// identity is what makes one guest of a shared image itself: written by the
// first-boot script the seed volume carries, before sshd and fapolicyd
// start.
type identity struct {
	Hostname string
	Address  string // on PrivateInterface, a /24
	// Hosts are every guest's address and name, for /etc/hosts.
	Hosts [][2]string
	// HostKeys maps a file name under /etc/ssh (ssh_host_ed25519_key,
	// ssh_host_ed25519_key.pub, ...) to its content; private keys are
	// written 0600, since sshd refuses one others can read.
	HostKeys map[string][]byte
	// AuthorizedKey logs in as each of Users.
	AuthorizedKey string
	Users         []string // with their home under /root or /home
	// SudoUser's password is SudoPassword.
	SudoUser, SudoPassword string
}

// firstBootScript renders the script the guest runs once from its seed
// volume. Every value reaches the shell quoted; file contents travel as
// base64, so no key or name can end a here-document early. Paths are under
// $CARGOSHIP_SEED_ROOT (empty on a guest), so a test can run the script
// into a directory; the steps that act on the running system (ownership,
// passwords, SELinux labels, the hostname) run only on a guest.
func firstBootScript(id identity) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# cargoship microvm: this guest's identity, written once at first boot\nset -eu\n")
	b.WriteString("R=\"${CARGOSHIP_SEED_ROOT:-}\"\n")
	b.WriteString("put() { mkdir -p \"$(dirname \"$R$1\")\"; printf '%s' \"$3\" | base64 -d > \"$R$1\"; chmod \"$2\" \"$R$1\"; }\n")
	put := func(path, mode string, content []byte) {
		fmt.Fprintf(&b, "put %s %s %s\n", sq(path), mode, sq(base64.StdEncoding.EncodeToString(content)))
	}
	put("/etc/hostname", "0644", []byte(id.Hostname+"\n"))
	var hosts strings.Builder
	hosts.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for _, h := range id.Hosts {
		fmt.Fprintf(&hosts, "%s\t%s\n", h[0], h[1])
	}
	put("/etc/hosts", "0644", []byte(hosts.String()))
	put("/etc/systemd/network/20-cargoship-fleet.network", "0644",
		[]byte(fmt.Sprintf("[Match]\nName=%s\n\n[Network]\nAddress=%s/24\n", PrivateInterface, id.Address)))
	for _, n := range slices.Sorted(maps.Keys(id.HostKeys)) {
		mode := "0600"
		if strings.HasSuffix(n, ".pub") {
			mode = "0644"
		}
		put("/etc/ssh/"+n, mode, id.HostKeys[n])
	}
	for _, u := range id.Users {
		home := "/home/" + u
		if u == "root" {
			home = "/root"
		}
		put(home+"/.ssh/authorized_keys", "0600", []byte(id.AuthorizedKey+"\n"))
		fmt.Fprintf(&b, "[ -n \"$R\" ] || chown -R %s: %s\n", sq(u), sq(home+"/.ssh"))
	}
	b.WriteString("[ -n \"$R\" ] && exit 0\n")
	fmt.Fprintf(&b, "hostname %s\n", sq(id.Hostname))
	if id.SudoUser != "" {
		fmt.Fprintf(&b, "printf '%%s\\n' %s | chpasswd\n", sq(id.SudoUser+":"+id.SudoPassword))
	}
	// written by a script, so labelled as its parent directory would be
	// rather than as the policy says; sshd cannot read a mislabelled key
	b.WriteString("if command -v restorecon >/dev/null; then restorecon -R /etc/hostname /etc/hosts /etc/systemd/network /etc/ssh /root/.ssh /home; fi\n")
	return b.String()
}

// sq single-quotes s for sh. A fleet imports nothing of cargoship's own
// packages (docs/design/test-fleet.md), so not pkg/shell's Quote.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }
