package provider

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// The suite's own fleet, so it never meets the phase suites' fleets.
const fleetName = "tfacc"

// world is the fleet, the two packages the steps apply, and the path the
// resource's package attribute names (a step swaps the file behind it).
type world struct {
	fleet     *fleet.Fleet
	hosts     []v1alpha1.Host
	in        *e2eutil.Inspector
	pkg, next *e2eutil.TestPackage
	pkgPath   string
}

// setUp brings the fleet up while the packages build, and points the
// testing framework at the Terraform binary on this machine.
func setUp(t *testing.T) *world {
	t.Helper()
	// before the Terraform lookup, so a run as a user skips rather than fails
	e2eutil.RequireRoot(t)
	useTerraformBinary(t)
	w := &world{}
	sw := e2eutil.SetUpSuite(t, fleet.Spec{Name: fleetName, Control: 1, Worker: 2, Image: container.ImageBase}, e2eutil.SuiteNeeds{
		Build: func() {
			w.pkg = e2eutil.BuildTestPackage(t, e2eutil.EngineVersion, e2eutil.EngineVersionBuilt)
			w.next = e2eutil.BuildTestPackage(t, e2eutil.UpgradeVersion, e2eutil.UpgradeBuilt)
			w.pkgPath = filepath.Join(t.TempDir(), "cluster.tar.zst")
			w.usePackage(t, w.pkg)
		},
	})
	w.fleet, w.hosts, w.in = sw.Fleet, sw.Hosts, sw.In
	return w
}

// useTerraformBinary makes the framework run the binary on this machine
// (it would download one otherwise, which an offline machine cannot).
func useTerraformBinary(t *testing.T) {
	t.Helper()
	t.Setenv("TF_ACC", "1")
	t.Setenv("CHECKPOINT_DISABLE", "1")
	if os.Getenv("TF_ACC_TERRAFORM_PATH") != "" {
		return
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			t.Setenv("TF_ACC_TERRAFORM_PATH", p)
			out, _ := exec.Command(p, "version").Output()
			t.Logf("acceptance tests run %s", strings.SplitN(string(out), "\n", 2)[0])
			return
		}
	}
	t.Fatal("neither terraform nor tofu is on PATH: the acceptance tests need one (set TF_ACC_TERRAFORM_PATH)")
}

// usePackage puts a package's bytes at the path the resource names.
func (w *world) usePackage(t *testing.T, p *e2eutil.TestPackage) {
	t.Helper()
	src, err := os.Open(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = src.Close() }()
	tmp := w.pkgPath + ".tmp"
	dst, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, w.pkgPath); err != nil {
		t.Fatal(err)
	}
}

// config is the resource over the fleet, with the given hosts absent, in
// the shape docs/provider.md shows.
func (w *world) config(absent ...string) string { return w.render(absent, nil) }

// configWithout is the resource with the given hosts left out of hosts.
func (w *world) configWithout(gone ...string) string { return w.render(nil, gone) }

// render writes the resource with hosts set absent and hosts left out.
func (w *world) render(absent, gone []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider \"cargoship\" {\n  known_hosts = %q\n}\n\n", w.fleet.KnownHostsPath)
	fmt.Fprintf(&b, "resource \"cargoship_cluster\" \"fleet\" {\n  name          = %q\n  load_balancer = %q\n  package       = %q\n\n  hosts = {\n",
		fleetName, w.hosts[0].PrivateAddress, w.pkgPath)
	for _, h := range w.hosts {
		if slices.Contains(gone, h.Hostname) {
			continue
		}
		fmt.Fprintf(&b, "    %s = {\n", h.Hostname)
		fmt.Fprintf(&b, "      address           = %q\n      port              = %d\n      user              = %q\n      key_path          = %q\n",
			h.SSH.Address, h.SSH.Port, h.SSH.User, h.SSH.KeyPath)
		if h.SSH.HostKey != "" {
			fmt.Fprintf(&b, "      host_key          = %q\n", h.SSH.HostKey)
		}
		fmt.Fprintf(&b, "      hostname          = %q\n      private_address   = %q\n      private_interface = %q\n      role              = %q\n      profile           = %q\n",
			h.Hostname, h.PrivateAddress, h.PrivateInterface, h.Role, h.Profile)
		if slices.Contains(absent, h.Hostname) {
			b.WriteString("      state             = \"absent\"\n")
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n\n  export_kubeconfig = true\n\n  timeouts = {\n    create = \"20m\"\n    update = \"20m\"\n    delete = \"10m\"\n  }\n}\n")
	return b.String()
}
