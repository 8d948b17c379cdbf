package fleet

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Cluster document identity, as cargoship's loader expects it.
const (
	clusterAPIVersion = "colonel-byte.dev/v1alpha1"
	clusterKind       = "Cluster"
)

var plainYAML = regexp.MustCompile(`^[A-Za-z0-9/._@-]+$`)

// yamlString renders s as a YAML scalar: plain when it is obviously safe,
// else double-quoted (a JSON string is a valid YAML double-quoted scalar).
func yamlString(s string) string {
	if plainYAML.MatchString(s) && !strings.HasPrefix(s, "-") {
		return s
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// SudoPasswordEnv is the environment variable an inventory rendered for
// UserSudoPassword names (sudoPasswordEnv): the document never holds the
// password itself. Set it to Fleet.SudoPassword.
const SudoPasswordEnv = "CARGOSHIP_FLEET_SUDO_PASSWORD"

// Inventory renders the fleet as a cargoship cluster document logging in as
// user. inventory.yaml is the one for root; UserTester exercises
// passwordless sudo, UserSudoPassword sudo with a password (from the
// SudoPasswordEnv variable).
func (f *Fleet) Inventory(user string) []byte { return renderInventory(f, user) }

// renderInventory writes the fleet as a cargoship cluster document. It is
// rendered by hand rather than marshalled so the layout is exactly the one
// users see in the docs, field order included.
func renderInventory(f *Fleet, user string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by the cargoship test fleet (%s backend). Removed by Down.\n", f.Backend)
	fmt.Fprintf(&b, "# Host keys: %s\n", f.KnownHostsPath)
	fmt.Fprintf(&b, "# User %s's sudo password: %s (also in %s)\n", f.SudoUser, f.SudoPassword, sudoPasswordFile)
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\nspec:\n", clusterAPIVersion, clusterKind, yamlString(f.Name))
	if cs := f.Role(RoleController); len(cs) > 0 {
		fmt.Fprintf(&b, "  config:\n    loadbalancer: %s\n", yamlString(cs[0].Address))
	} else {
		b.WriteString("  config: {}\n")
	}
	b.WriteString("  hosts:\n")
	for _, h := range f.Hosts {
		addr, port := h.SSHEndpoint()
		fmt.Fprintf(&b, "    - ssh:\n")
		fmt.Fprintf(&b, "        address: %s\n", yamlString(addr))
		fmt.Fprintf(&b, "        user: %s\n", yamlString(user))
		fmt.Fprintf(&b, "        port: %d\n", port)
		fmt.Fprintf(&b, "        keyPath: %s\n", yamlString(f.KeyPath))
		if h.HostKey != "" {
			fmt.Fprintf(&b, "        hostKey: %s\n", yamlString(h.HostKey))
		}
		fmt.Fprintf(&b, "      hostname: %s\n", yamlString(h.Name))
		fmt.Fprintf(&b, "      privateAddress: %s\n", yamlString(h.Address))
		// named so fact gathering does not have to guess (a VM's default
		// route is on its management NIC, not on this one)
		fmt.Fprintf(&b, "      privateInterface: %s\n", yamlString(f.privateInterfaceName()))
		fmt.Fprintf(&b, "      role: %s\n", yamlString(h.Role))
		fmt.Fprintf(&b, "      profile: %s\n", yamlString(h.Profile))
		if user == UserSudoPassword {
			fmt.Fprintf(&b, "      sudoPasswordEnv: %s\n", SudoPasswordEnv)
		}
	}
	return []byte(b.String())
}

// renderKnownHosts lists every key of every host, so OpenSSH and
// x/crypto/ssh/knownhosts can check host keys strictly whichever key type
// they negotiate.
func renderKnownHosts(keys map[string][]ssh.PublicKey, hosts []Host) []byte {
	var b strings.Builder
	for _, h := range hosts {
		for _, k := range keys[h.Name] {
			b.WriteString(knownhosts.Line([]string{h.knownHostsName()}, k))
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// writeFleetFiles writes the inventory, known_hosts and sudo password file.
func writeFleetFiles(f *Fleet, keys map[string][]ssh.PublicKey) error {
	if err := writeFileAtomic(f.KnownHostsPath, renderKnownHosts(keys, f.Hosts), 0o644); err != nil {
		return err
	}
	if err := writeFileAtomic(f.Dir+"/"+sudoPasswordFile, []byte(f.SudoPassword+"\n"), 0o600); err != nil {
		return err
	}
	// 0600: its header names the sudo password.
	return writeFileAtomic(f.InventoryPath, renderInventory(f, UserRoot), 0o600)
}
