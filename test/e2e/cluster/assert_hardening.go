package cluster

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// selinuxHosts are the hosts phases 9 and 11 claim: SELinux enabled,
// whatever the family.
func selinuxHosts(s *node.Fleet) []*node.Host {
	var out []*node.Host
	for _, h := range s.Hosts {
		if hostos.IsSELinuxEnabled(h.Facts.SELinux) {
			out = append(out, h)
		}
	}
	return out
}

// fapolicydHosts are the hosts phase 10 claims: fapolicyd running.
func fapolicydHosts(s *node.Fleet) []*node.Host {
	var out []*node.Host
	for _, h := range s.Hosts {
		if h.Facts.Fapolicyd {
			out = append(out, h)
		}
	}
	return out
}

// vmHardened says the run's hosts are the VM fleet's, which all enforce
// SELinux and run fapolicyd: phases 9 to 11 must claim every one.
func (w *world) vmHardened(t *testing.T, s *node.Fleet, claimed []*node.Host, what string) {
	t.Helper()
	if w.backend == backendMicroVM {
		assert.Len(t, claimed, len(s.Hosts), "every guest of the VM fleet %s", what)
	}
}

// assertPrepareEL checks phase 9: it claims the SELinux hosts. A host
// with no rpm database (the VM fleet's Debian guests) has no
// container-selinux package to install, and the phase leaves it as it is.
func assertPrepareEL(t *testing.T, w *world, in *inspector, s *node.Fleet, title string) {
	t.Helper()
	hs := selinuxHosts(s)
	w.vmHardened(t, s, hs, "enforces SELinux")
	if len(hs) == 0 {
		elNote(t, w, s, title)
		return
	}
	for _, h := range hs {
		name := h.Spec.Hostname
		assert.Equal(t, strings.ToLower(in.root(t, name, "getenforce")), h.Facts.SELinux, "%s: the SELinux fact", name)
		if h.Facts.Family != v1alpha1.FamilyEnterpriseLinux {
			if _, rpm := in.try(t, name, "command -v rpm"); !rpm {
				w.standDown(t, title+" on "+name, "no rpm database: there is no container-selinux package to install; the guest's policy carries the container types")
			}
		}
	}
}

// assertFapolicyd checks phase 10 from inside each host running
// fapolicyd: the package's rules and an execute allow for the engine
// binary by path are in place, fapolicyd accepts its configuration and
// still runs.
func assertFapolicyd(t *testing.T, w *world, in *inspector, s *node.Fleet, title string) {
	t.Helper()
	hs := fapolicydHosts(s)
	w.vmHardened(t, s, hs, "runs fapolicyd")
	if len(hs) == 0 {
		elNote(t, w, s, title)
		return
	}
	dir := hostos.FapolicydRulesDir
	for _, h := range hs {
		name := h.Spec.Hostname
		assert.Contains(t, in.root(t, name, "cat "+path.Join(dir, hostos.FapolicydRulesFile)), e2eutil.FapolicydRule, "%s: the package's rules", name)
		exec := in.root(t, name, "cat "+path.Join(dir, hostos.FapolicydExecutableFile))
		if bin, byPath := engineBinary(s, h); byPath {
			assert.Contains(t, exec, "allow perm=execute all : path="+bin, "%s: the engine binary is allowed by path", name)
		}
		in.root(t, name, "fapolicyd-cli --check-config")
		assert.Equal(t, "active", in.root(t, name, "systemctl is-active fapolicyd"), "%s: fapolicyd runs after its rules were reloaded", name)
		assert.Contains(t, in.root(t, name, "fapolicyd-cli --list"), e2eutil.FapolicydRule, "%s: fapolicyd loaded the rules", name)
	}
}

// assertSELinuxPolicy checks phase 11 from inside each SELinux host: the
// module is installed, the boolean set, and the file contexts known to
// the policy.
func assertSELinuxPolicy(t *testing.T, w *world, in *inspector, s *node.Fleet, title string) {
	t.Helper()
	hs := selinuxHosts(s)
	w.vmHardened(t, s, hs, "enforces SELinux")
	if len(hs) == 0 {
		elNote(t, w, s, title)
		return
	}
	for _, h := range hs {
		name := h.Spec.Hostname
		assert.Contains(t, strings.Fields(in.root(t, name, "semodule -l")), e2eutil.SELinuxModule, "%s: semodule -l", name)
		assert.Contains(t, in.root(t, name, "getsebool "+e2eutil.SELinuxBoolean), "--> on", "%s: the boolean", name)
		assert.Contains(t, in.root(t, name, "matchpathcon /etc/cargoship-e2e/motd"), e2eutil.MOTDType, "%s: the file context", name)
		bin, _ := engineBinary(s, h)
		assert.Contains(t, in.root(t, name, "matchpathcon "+bin), e2eutil.EngineExecType, "%s: the engine binary's file context", name)
	}
}

// assertEngineLabelled checks #20's two facts about the installed engine
// binary on SELinux and fapolicyd hosts: it carries the policy's label,
// not the staging directory's, and fapolicyd lets a user that is not root
// (root is exempt in the sample rules) execute it.
func assertEngineLabelled(t *testing.T, in *inspector, s *node.Fleet, when string) {
	t.Helper()
	for _, h := range s.Hosts {
		name := h.Spec.Hostname
		bin, byPath := engineBinary(s, h)
		if hostos.IsSELinuxEnabled(h.Facts.SELinux) {
			assert.Contains(t, in.root(t, name, "stat -c %C "+bin), ":"+e2eutil.EngineExecType+":", "%s %s: %s's label", name, when, bin)
		}
		if h.Facts.Fapolicyd && byPath {
			out, ok := in.try(t, name, "runuser -u nobody -- "+bin+" --version")
			assert.True(t, ok, "%s %s: fapolicyd lets a user that is not root run %s: %s", name, when, bin, out)
		}
	}
}

// engineBinary is the engine binary's path on h and whether h took the
// binary route, where phase 10 allows the files it installs by path (a
// package manager's files are the package manager's to trust).
func engineBinary(s *node.Fleet, h *node.Host) (string, bool) {
	return s.Engine.Paths().Binary, h.Route == v1alpha1.RouteBinary
}
