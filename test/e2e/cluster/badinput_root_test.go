package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// badInputCases are the refusals issue 5 names: each fails with a clear
// error, and none may change a byte on any host.
func badInputCases(w *world, armPkg string) []badCase {
	first := func(c *v1alpha1.Cluster) *v1alpha1.Host { return &c.Spec.Hosts[0] }
	return []badCase{
		{name: "unreachable host", expect: "connect", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			h := c.Spec.Hosts[len(c.Spec.Hosts)-1]
			conn := *h.SSH
			conn.Address, conn.HostKey = "10.255.255.1", ""
			h.SSH, h.Hostname, h.PrivateAddress = &conn, "ghost", "10.255.255.1"
			c.Spec.Hosts = append(c.Spec.Hosts, h)
		}},
		{name: "wrong key", expect: "refused the login", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			p, _ := newKeyFile(t)
			first(c).SSH.KeyPath = p
		}},
		{name: "host key mismatch", expect: "host key", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			_, pub := newKeyFile(t)
			first(c).SSH.HostKey = string(ssh.MarshalAuthorizedKey(pub))
		}},
		{name: "no sudo", expect: "sudo", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			// sudopw's sudo needs a password the document does not name.
			first(c).SSH.User = fleet.UserSudoPassword
		}},
		{name: "package for another architecture", expect: "arm64", pkg: func(*testing.T, string) string { return armPkg }},
		{name: "tampered package", expect: "sha256|checksum|corrupt|mismatch", pkg: tampered},
		{name: "metacharacters in a hostname", expect: "hostname", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			first(c).Hostname = "kc0;reboot"
		}},
		{name: "metacharacters in a label", expect: "label", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			first(c).Labels = map[string]string{"tier": "$(reboot)"}
		}},
		{name: "newline in an environment value", expect: "environment", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			first(c).Environment = map[string]string{"HTTP_PROXY": "x\nreboot"}
		}},
		{name: "metacharacters in a path", expect: "dst", edit: func(t *testing.T, c *v1alpha1.Cluster) {
			first(c).Files = []v1alpha1.HostFile{{Name: "evil", Dst: "/etc/x;reboot", Data: "x"}}
		}},
	}
}

// badInput tries each refusal against the fresh fleet and proves no host
// changed.
func badInput(t *testing.T, w *world, in *inspector, pkg *testPackage) {
	if w.backend != backendContainer {
		w.standDown(t, "bad input", "the refusals use the container fleet's users (sudopw) and addresses")
		return
	}
	before := map[string]string{}
	for _, h := range w.views.Apply.Spec.Hosts {
		before[h.Hostname] = in.fingerprint(t, h.Hostname)
	}
	armPkg := buildArchPackage(t, w.distro, "arm64")
	for _, bc := range badInputCases(w, armPkg) {
		run(t, bc.name, func(t *testing.T) {
			inv := w.applyPath
			if bc.edit != nil {
				c := cloneCluster(t, w.views.Apply)
				bc.edit(t, c)
				inv = writeInventory(t, c)
			}
			p := pkg.Path
			if bc.pkg != nil {
				p = bc.pkg(t, pkg.Path)
			}
			expectRefusal(t, w, p, inv, bc.expect)
		})
	}
	for _, h := range w.views.Apply.Spec.Hosts {
		sameFingerprint(t, h.Hostname, before[h.Hostname], in.fingerprint(t, h.Hostname), "a refused run changed a byte")
	}
}

// buildArchPackage makes a small package for one architecture only.
func buildArchPackage(t *testing.T, d e2eutil.Distro, arch string) string {
	t.Helper()
	dir := t.TempDir()
	def := "kind: ZarfDistro\nmetadata:\n  name: other-arch\n  version: 0.0.1\n  architectures: [" + arch + "]\nspec:\n  type: " + d.Name + "\n  version: " + d.Version + "\n  config:\n    files:\n      - source: motd\n        target: /etc/cargoship-e2e/other-arch\n"
	if err := os.WriteFile(filepath.Join(dir, "distro.yaml"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "motd"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return createPackage(t, dir)
}
