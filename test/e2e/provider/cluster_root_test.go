package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/colonel-byte/cargoship/internal/provider"
	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

const res = "cargoship_cluster.fleet"

// TestAccClusterLifecycle walks a cluster's life through Terraform: a plan
// refused as validate refuses, create one controller and two workers,
// import, take a worker out (set absent, then left out of hosts) and put
// it back, see a removal made on the side in the plan and repair it,
// upgrade by a new package at the same path, destroy. After every apply the
// framework plans again and fails on a non-empty plan.
func TestAccClusterLifecycle(t *testing.T) {
	w := setUp(t)
	d := e2eutil.K3s
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"cargoship": providerserver.NewProtocol6WithError(provider.New("acc")()),
		},
		Steps: []resource.TestStep{
			{
				// A plan refuses what validate refuses, at the attribute.
				Config:      strings.Replace(w.config(), `private_address   = "`+w.hosts[2].PrivateAddress+`"`, `private_address   = "10.0.0.300"`, 1),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`hosts\["kw1"\]\.private_address: "10\.0\.0\.300" is not an IP address`),
			},
			{
				Config: w.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "version", d.Version),
					resource.TestCheckResourceAttr(res, "engine", d.Name),
					resource.TestCheckResourceAttr(res, "nodes.#", "3"),
					w.nodesReady("kc0", "kw0", "kw1"),
					w.engineOn(t, d.Built, "kc0", "kw0", "kw1"),
					resource.TestMatchResourceAttr(res, "kubeconfig",
						regexp.MustCompile(`server: https://`+regexp.QuoteMeta(w.hosts[0].PrivateAddress)+`:6443`)),
				),
			},
			{
				ResourceName: res, ImportState: true, ImportStateId: w.fleet.InventoryPath,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["hosts.%"] != "3" || states[0].Attributes["hosts.kw1.role"] != "worker" {
						return fmt.Errorf("the import of %s holds %v", w.fleet.InventoryPath, states)
					}
					return nil
				},
			},
			{
				Config: w.config("kw1"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "nodes.#", "2"),
					resource.TestCheckResourceAttr(res, "hosts.kw1.state", "absent"),
					w.nodesReady("kc0", "kw0"),
					w.engineOn(t, d.Built, "kc0", "kw0"),
					w.noEngineOn(t, "kw1"),
				),
			},
			{
				Config: w.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "nodes.#", "3"),
					w.nodesReady("kc0", "kw0", "kw1"),
					w.engineOn(t, d.Built, "kw1"),
				),
			},
			{
				// Leaving the map takes a host out as absent does.
				Config: w.configWithout("kw1"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "hosts.%", "2"),
					w.nodesReady("kc0", "kw0"),
					w.noEngineOn(t, "kw1"),
				),
			},
			{
				Config: w.config(),
				Check:  w.engineOn(t, d.Built, "kw1"),
			},
			{
				// Someone takes kw1 out with the CLI: the next plan shows it.
				PreConfig:          func() { w.resetOnTheSide(t, "kw1") },
				Config:             w.config(),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: w.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "nodes.#", "3"),
					w.engineOn(t, d.Built, "kw1"),
				),
			},
			{
				PreConfig: func() { w.usePackage(t, w.next) },
				Config:    w.config(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "version", d.Upgrade),
					resource.TestCheckResourceAttr(res, "nodes.0.version", d.UpgradeBuilt),
					w.nodesReady("kc0", "kw0", "kw1"),
					w.engineOn(t, d.UpgradeBuilt, "kc0", "kw0", "kw1"),
				),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			for _, h := range []string{"kc0", "kw0", "kw1"} {
				if err := w.noEngine(t, h); err != nil {
					return err
				}
			}
			return nil
		},
	})
}

// nodesReady checks the nodes attribute lists exactly these nodes, Ready.
func (w *world) nodesReady(names ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[res]
		if !ok {
			return fmt.Errorf("%s is not in the state", res)
		}
		a := rs.Primary.Attributes
		if a["nodes.#"] != fmt.Sprint(len(names)) {
			return fmt.Errorf("nodes.# is %s, want %d", a["nodes.#"], len(names))
		}
		for i, n := range names {
			if a[fmt.Sprintf("nodes.%d.name", i)] != n || a[fmt.Sprintf("nodes.%d.ready", i)] != "true" {
				return fmt.Errorf("nodes.%d is %s ready=%s, want %s Ready", i, a[fmt.Sprintf("nodes.%d.name", i)], a[fmt.Sprintf("nodes.%d.ready", i)], n)
			}
		}
		return nil
	}
}

// engineOn checks from inside each host that the engine runs the version.
func (w *world) engineOn(t *testing.T, built string, hosts ...string) resource.TestCheckFunc {
	e := e2eutil.K3s.Engine()
	return func(*terraform.State) error {
		for _, h := range hosts {
			out, _ := w.in.Try(t, h, e.VersionCommand())
			if !strings.Contains(out, built) {
				return fmt.Errorf("%s: the engine reports %q, want %s", h, strings.TrimSpace(out), built)
			}
			ctrl := h == "kc0"
			if state, _ := w.in.Try(t, h, "systemctl is-active "+e.Service(ctrl)); strings.TrimSpace(state) != "active" {
				return fmt.Errorf("%s: %s is %q", h, e.Service(ctrl), strings.TrimSpace(state))
			}
		}
		return nil
	}
}

// noEngineOn checks the hosts have no engine left.
func (w *world) noEngineOn(t *testing.T, hosts ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, h := range hosts {
			if err := w.noEngine(t, h); err != nil {
				return err
			}
		}
		return nil
	}
}

func (w *world) noEngine(t *testing.T, h string) error {
	out, _ := w.in.Try(t, h, e2eutil.K3s.Engine().VersionCommand())
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("%s still has the engine: %q", h, strings.TrimSpace(out))
	}
	return nil
}

// resetOnTheSide takes a host out as an operator would with
// `cargoship reset --target-hosts`, outside Terraform.
func (w *world) resetOnTheSide(t *testing.T, target string) {
	t.Helper()
	e2eutil.RunWhole(t, action.Options{
		PackagePath: w.pkgPath,
		ClusterPath: w.fleet.InventoryPath,
		ClusterDir:  filepath.Dir(w.fleet.InventoryPath),
		TmpDir:      os.TempDir(),
		Log:         e2eutil.TestLogger(t),
		Phase: node.Options{
			Concurrency: 30, UploadConcurrency: 30, Timeout: 10 * time.Minute,
			KnownHostsPath: w.fleet.KnownHostsPath, InstanceID: "tfacc-side",
			LookupEnv: os.LookupEnv, TargetHosts: []string{target},
		},
	}, action.ResetPhases())
}
