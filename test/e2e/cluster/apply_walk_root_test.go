package cluster

import (
	"fmt"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// walkStep is one phase of the apply walk and what must be true after it.
type walkStep struct {
	name  string // Test_NN_Name
	title string // the phase's title, pinning docs/apply.md's order
	check func(t *testing.T, s *node.Fleet)
}

// applyWalk is the ApplyPhaseSuite: apply's phases one at a time, each
// asserted from inside the hosts before the next runs.
func applyWalk(t *testing.T, w *world, in *inspector, pkg *testPackage) {
	wk := newWalker(t, w.runOptions(pkg.Path, w.applyPath, false), action.ApplyPhases())
	n := countsFor(w.views.Apply)
	hosts := w.views.Apply.Spec.Hosts
	each := func(t *testing.T, fn func(t *testing.T, hostname string, h *node.Host)) {
		t.Helper()
		for _, h := range wk.state().Hosts {
			fn(t, h.Spec.Hostname, h)
		}
	}
	steps := []walkStep{
		{"Test_01_Connect", "Connect to hosts", func(t *testing.T, s *node.Fleet) {
			require.Len(t, s.Hosts, n.Hosts)
			each(t, func(t *testing.T, name string, h *node.Host) {
				assert.NotNil(t, h.Conn, "%s has no connection", name)
				assert.Equal(t, "0", in.root(t, name, "id -u"))
			})
		}},
		{"Test_02_DetectOS", "Detect host operating systems", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, h *node.Host) {
				rel, err := hostos.ParseOSRelease([]byte(in.root(t, name, "cat /etc/os-release")))
				require.NoError(t, err)
				assert.Equal(t, rel.ID, h.Facts.OSID, name)
				assert.Equal(t, hostos.Detect(rel).Family, h.Facts.Family, name)
			})
		}},
		{"Test_03_GatherFacts", "Gather host facts", func(t *testing.T, s *node.Fleet) {
			for i, h := range s.Hosts {
				assert.Equal(t, hosts[i].PrivateAddress, h.Facts.PrivateAddress, h.Spec.Hostname)
				assert.Equal(t, hosts[i].Hostname, h.NodeName())
				assert.Contains(t, in.root(t, h.Spec.Hostname, "ip -o -4 addr show dev "+h.Facts.PrivateInterface), h.Facts.PrivateAddress)
				assert.Equal(t, phase.NormalizeArch(in.root(t, h.Spec.Hostname, "uname -m")), h.Facts.Arch)
			}
		}},
		{"Test_04_ValidateHosts", "Validate hosts", nil},
		{"Test_05_DistroFacts", "Gathering facts about the distro installed", func(t *testing.T, s *node.Fleet) {
			// The apply walk expects hosts with no engine on them (docs/e2e.md):
			// it is what makes the later upgrade assertions mean anything.
			each(t, func(t *testing.T, name string, h *node.Host) {
				assert.Empty(t, h.EngineVersion, "%s already runs an engine; reset or rebuild the hosts before installing again", name)
			})
		}},
		{"Test_06_RemovedNodes", "Checking for nodes no longer in the config", nil},
		{"Test_07_Lock", "Acquire exclusive host lock", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, _ *node.Host) {
				assert.Equal(t, s.Options.InstanceID, in.root(t, name, "cat "+phase.LockPath), "%s: lock holder", name)
			})
		}},
		{"Test_08_PrepareHosts", "Prepare hosts", func(t *testing.T, s *node.Fleet) {
			// The keys are the package's: a network key (namespaced) is
			// applied live, a vm. key a container host refuses is
			// reported, not fatal.
			sysctl := s.Distro.Spec.Config.OS.Sysctl
			each(t, func(t *testing.T, name string, _ *node.Host) {
				conf := in.root(t, name, "cat "+hostos.SysctlPath)
				for k, v := range sysctl {
					assert.Contains(t, conf, k+" = "+v, "%s: %s", name, hostos.SysctlPath)
					if strings.HasPrefix(k, "net.") || w.backend == backendMicroVM {
						// a guest has a kernel of its own: every key is applied
						assert.Equal(t, v, in.root(t, name, "sysctl -n "+k), "%s: %s is applied", name, k)
					}
				}
				assert.Contains(t, in.root(t, name, "cat "+hostos.ModulesPath), "br_netfilter")
			})
			if w.backend == backendContainer {
				notes := strings.Join(s.Report.Notes(), "\n")
				for k := range sysctl {
					if strings.HasPrefix(k, "vm.") {
						assert.Contains(t, notes, k, "a node-wide key a container refuses is reported, not fatal")
					}
				}
			}
		}},
		{"Test_09_PrepareEL", "Prepare hosts - Enterprise Linux support", func(t *testing.T, s *node.Fleet) {
			assertPrepareEL(t, w, in, s, "Prepare hosts - Enterprise Linux support")
		}},
		{"Test_10_Fapolicyd", "Prepare hosts - Enterprise Linux support - Fapolicyd", func(t *testing.T, s *node.Fleet) {
			assertFapolicyd(t, w, in, s, "Prepare hosts - Enterprise Linux support - Fapolicyd")
		}},
		{"Test_11_SELinuxPolicy", "Prepare hosts - Enterprise Linux support - SELinux policy", func(t *testing.T, s *node.Fleet) {
			assertSELinuxPolicy(t, w, in, s, "Prepare hosts - Enterprise Linux support - SELinux policy")
		}},
		{"Test_12_EtcHosts", "Updating hosts file for clusters nodes", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, _ *node.Host) {
				body := in.root(t, name, "cat /etc/hosts")
				for _, peer := range hosts {
					assert.Regexp(t, fmt.Sprintf(`(?m)^%s\s.*\b%s\b`, strings.ReplaceAll(peer.PrivateAddress, ".", `\.`), peer.Hostname), body, "%s: /etc/hosts lacks %s", name, peer.Hostname)
				}
				assert.Contains(t, body, "localhost", "%s: the rest of /etc/hosts is kept", name)
			})
		}},
		{"Test_13_Firewall", "Updating hosts firewall", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, h *node.Host) { assertFirewall(t, w, in, s, name, h) })
		}},
		{"Test_14_UploadFiles", "Upload files to hosts", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, h *node.Host) {
				pls := commonPlacements(s, h)
				if len(pls) == 0 {
					w.standDown(t, "Test_14_UploadFiles on "+name, "the package sends this host no common file and no image")
				}
				for _, pl := range pls {
					assertPlaced(t, in, name, pl, pl.Target)
				}
			})
		}},
		{"Test_15_UploadRPM", "Upload files to hosts – RPM", func(t *testing.T, s *node.Fleet) { assertRoute(t, in, s, wk, v1alpha1.RouteRPM) }},
		// A package with no debs for controllers leaves Debian controllers
		// to the binary route: APT claims only the hosts it uploads to
		// (docs/apply.md, Install routes).
		{"Test_16_UploadAPT", "Upload files to hosts – APT", func(t *testing.T, s *node.Fleet) { assertRoute(t, in, s, wk, v1alpha1.RouteAPT) }},
		{"Test_17_UploadBinaries", "Upload files to hosts – Binaries", func(t *testing.T, s *node.Fleet) {
			assertRoute(t, in, s, wk, v1alpha1.RouteBinary)
			// the upload phases are over: what fan-out did in them
			w.assertFanout(t, in, s)
		}},
		{"Test_18_ImportImages", "Import images", func(t *testing.T, s *node.Fleet) {
			// k3s and rke2 import their images directory by themselves:
			// nothing to import.
			assert.True(t, s.Engine.ImportsImagesDirByItself())
		}},
		{"Test_19_ConfigureEngine", "Configure engine", func(t *testing.T, s *node.Fleet) {
			cfgPath := s.Engine.Paths().Config
			each(t, func(t *testing.T, name string, h *node.Host) {
				cfg := in.root(t, name, "cat "+cfgPath)
				assert.Contains(t, cfg, "node-name: "+name, name)
				assert.Contains(t, cfg, "node-ip: "+h.Facts.PrivateAddress, name)
				assert.Equal(t, "600", in.root(t, name, "stat -c %a "+cfgPath), "%s: the config names a token file: 0600", name)
				leader := s.Leader()
				if h == leader {
					assert.NotContains(t, cfg, "server:", "the founder joins nobody")
					return
				}
				assert.Contains(t, cfg, fmt.Sprintf("server: https://%s:%d", leader.Facts.PrivateAddress, s.Engine.JoinPort()),
					"%s joins through the founder during a cold bootstrap, on the engine's own join port", name)
			})
		}},
		// This walk's inventory has no VIP; TestVIPFailoverWithKeepalived
		// walks one.
		{"Test_19a_ConfigureVIP", "Configure the VIP", nil},
		{"Test_20_InitializeControllers", "Initialize Controller", func(t *testing.T, s *node.Fleet) {
			assertNodes(t, in, s, countsFor(w.views.Apply).Controllers, true)
		}},
		{"Test_20a_WaitVIP", "Wait for the VIP", nil},
		{"Test_21_ApplyManifests", "Apply manifests", func(t *testing.T, s *node.Fleet) {
			// Every manifest of the package is recorded as applied at its
			// sha256; the test package's CNI stand-in, applied with the
			// engine's own kubectl, is read back from the API.
			ctl := s.KubectlHost().NodeName()
			for _, e := range s.Package.EntriesOf(pkgfile.KindManifests) {
				rec := fmt.Sprintf("/var/lib/cargoship/manifests/%02d-%s.applied", e.Index, path.Base(e.Name))
				assert.Equal(t, e.SHA256, strings.TrimSpace(in.root(t, ctl, "cat "+rec)), "%s applied at its content", e.Name)
				if path.Base(e.Name) != e2eutil.CNIManifest {
					continue
				}
				args := append([]string{"-n", "kube-system", "get", "-o", "name"}, e2eutil.CNIObjects...)
				got := strings.Fields(in.root(t, ctl, s.Engine.Kubectl(args...)))
				assert.ElementsMatch(t, e2eutil.CNIObjects, got, "every object of the manifest is in the cluster")
			}
		}},
		{"Test_22_InitializeWorkers", "Initialize Worker", func(t *testing.T, s *node.Fleet) {
			assertNodes(t, in, s, countsFor(w.views.Apply).Hosts, false)
		}},
		{"Test_23_UpgradeControllers", "Upgrade Controller", nil},
		{"Test_24_UpgradeWorkers", "Upgrade Worker", nil},
		{"Test_25_InstallStaged", "Install staged files", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, h *node.Host) {
				for _, pl := range routePlacements(s, h, h.Route) {
					if h.Route == v1alpha1.RouteBinary {
						assertPlaced(t, in, name, pl, pl.Target)
						_, staged := in.try(t, name, "test -e "+node.StagedPath(pl.Target))
						assert.False(t, staged, "%s: the staged copy of %s was moved, not copied", name, pl.Target)
						continue
					}
					cmd, err := packageInstalledCmd(h.OS, pl.Target)
					require.NoError(t, err, name)
					_, ok := in.try(t, name, cmd)
					assert.True(t, ok, "%s: %s installed the package in the uploaded %s", name, h.Route, pl.Target)
				}
				assert.NotEmpty(t, in.root(t, name, "systemctl cat "+s.Engine.Service(h.IsController())+".service | head -1"), "%s: systemd knows the engine's unit", name)
			})
			assertEngineLabelled(t, in, s, "after the install")
		}},
		{"Test_26_SyncConfigControllers", "Sync Registry Config Controller", nil},
		{"Test_27_SyncConfigWorkers", "Sync Registry Config Worker", nil},
		{"Test_28_Kubeconfig", "Updating kubeconfig file with the current cluster", func(t *testing.T, s *node.Fleet) {
			st, err := os.Stat(s.Options.KubeconfigOut)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the admin kubeconfig is 0600")
			b, err := os.ReadFile(s.Options.KubeconfigOut)
			require.NoError(t, err)
			assert.Contains(t, string(b), fmt.Sprintf("server: https://%s:%d", s.Cluster.Spec.Config.Loadbalancer, s.Engine.APIPort()))
		}},
		{"Test_29_LabelNodes", "Labeling nodes with their profile group", func(t *testing.T, s *node.Fleet) {
			nodes := clusterNodes(t, in, w.firstController())
			for _, h := range s.Hosts {
				assert.Equal(t, "true", nodes[h.NodeName()].Labels["node-role.kubernetes.io/"+h.Spec.Profile], "%s labelled with its profile", h.NodeName())
			}
		}},
		{"Test_30_Unlock", "Release exclusive host lock", func(t *testing.T, s *node.Fleet) {
			// Ungated on purpose: a stage-only walk that took the lock and
			// skipped the release would delay the next run on every node.
			each(t, func(t *testing.T, name string, _ *node.Host) {
				_, held := in.try(t, name, "test -e "+phase.LockPath)
				assert.False(t, held, "%s still holds the lock", name)
			})
		}},
		{"Test_31_Disconnect", "Disconnect from hosts", func(t *testing.T, s *node.Fleet) {
			each(t, func(t *testing.T, name string, _ *node.Host) {
				_, left := in.try(t, name, "test -e "+phase.TempDir)
				assert.False(t, left, "%s: temp files left behind", name)
			})
		}},
	}
	for _, st := range steps {
		if !run(t, st.name, func(t *testing.T) {
			// Which phases a stage-only walk stands down is not written
			// here: it is phase.InStageHalf, the predicate StagePhases
			// keeps its phases by, so the walk and the list agree.
			if w.stage && !wk.inStageHalf(t, st.title) {
				class := wk.classOf(t, st.title)
				wk.pass(t, st.title)
				t.Skipf("%s is set: %q is not in the staging half (class %s)", envStageOnly, st.title, class)
			}
			wk.step(t, st.title)
			if st.check != nil {
				st.check(t, wk.state())
			}
		}) {
			return
		}
	}
	if wk.next != len(wk.mgr.Phases) {
		t.Errorf("the walk asserted %d phases, the list has %d", wk.next, len(wk.mgr.Phases))
	}
	if w.stage && wk.ran != len(action.StagePhases()) {
		t.Errorf("the stage-only walk ran %d phases, StagePhases has %d", wk.ran, len(action.StagePhases()))
	}
}

// assertRoute checks one route phase from inside the hosts: it claimed
// exactly the hosts expectedRoute gives it, and each holds the files the
// route sent it, an executable of the binary route staged beside its
// target, and the engine's unit known to systemd once the route shipped
// it.
func assertRoute(t *testing.T, in *inspector, s *node.Fleet, wk *walker, route string) {
	t.Helper()
	for _, h := range wk.state().Hosts {
		name := h.Spec.Hostname
		want := expectedRoute(s, h)
		if want != route {
			assert.NotEqual(t, route, h.Route, routeNote(h, want))
			continue
		}
		assert.Equal(t, route, h.Route, routeNote(h, want))
		pls := routePlacements(s, h, route)
		for _, pl := range pls {
			at := pl.Target
			if pl.Staged {
				// The hosts start with no engine (Test_05), so nothing of
				// the route is in place yet: the executable waits, staged.
				at = node.StagedPath(pl.Target)
				_, placed := in.try(t, name, "test -e "+pl.Target)
				assert.False(t, placed, "%s: %s is in place before Install staged files", name, pl.Target)
			}
			assertPlaced(t, in, name, pl, at)
		}
		if unit := s.Engine.Service(h.IsController()); shipsUnit(pls, unit) {
			assert.NotEmpty(t, in.root(t, name, "systemctl cat "+unit+".service | head -1"), "%s: systemd knows the unit", name)
		}
	}
}
