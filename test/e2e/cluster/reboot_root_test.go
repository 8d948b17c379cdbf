package cluster

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/firewall"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// applied is what apply left on one host that a boot must not lose, read
// from the files apply wrote and the state the host ran in before the
// reboot.
type applied struct {
	sysctl    map[string]string // key = value of the sysctl.d file
	modules   []string          // the modules-load.d file's modules
	selinux   string            // getenforce
	fapolicyd bool
	firewalld bool
}

// confLines are the non-comment lines of a conf file on a host.
func confLines(t *testing.T, in *inspector, name, path string) []string {
	t.Helper()
	out, _ := in.try(t, name, "cat "+path)
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, ";") {
			lines = append(lines, l)
		}
	}
	return lines
}

func readApplied(t *testing.T, in *inspector, name string) applied {
	t.Helper()
	a := applied{sysctl: map[string]string{}, modules: confLines(t, in, name, hostos.ModulesPath)}
	for _, l := range confLines(t, in, name, hostos.SysctlPath) {
		if k, v, ok := strings.Cut(l, "="); ok {
			a.sysctl[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	a.selinux, _ = in.try(t, name, "getenforce")
	_, a.fapolicyd = in.try(t, name, "systemctl is-active --quiet fapolicyd")
	_, a.firewalld = in.try(t, name, "systemctl is-active --quiet firewalld")
	return a
}

// hardeningSysctl is a hardening baseline's sysctl file that sorts after
// 90-... and before zzz-cargoship.conf, setting a key the package sets.
const hardeningSysctl = "/etc/sysctl.d/99-hardening.conf"

// rebootWalk reboots every host of the apply view, on a backend whose hosts
// reboot for real (the VM fleet), and checks from inside each that what
// apply set survived the boot: sysctl values, global ones included, the
// modules loaded at boot, swap off, the firewall, the /etc/hosts block,
// SELinux and fapolicyd, the engine's unit enabled and the nodes Ready.
// An apply after the boot then finds everything in place.
func rebootWalk(t *testing.T, w *world, in *inspector, pkg *testPackage) {
	rb, ok := w.prov.(fleet.Rebooter)
	if !ok {
		t.Skipf("the %s backend's hosts cannot reboot: they share this machine's kernel (docs/fleet.md)", w.backend)
	}
	var hosts []string
	for _, h := range w.views.Apply.Spec.Hosts {
		hosts = append(hosts, h.Hostname)
	}
	before := map[string]applied{}
	for _, h := range hosts {
		before[h] = readApplied(t, in, h)
		require.NotEmpty(t, before[h].sysctl, "%s: apply wrote %s", h, hostos.SysctlPath)
		require.NotEmpty(t, before[h].modules, "%s: apply wrote %s", h, hostos.ModulesPath)
	}
	if w.backend == backendMicroVM {
		// a hardened host's own sysctl file, as STIG baselines ship one:
		// cargoship's file must sort after it to win at boot (#20)
		for _, h := range hosts {
			in.root(t, h, "printf 'net.ipv4.ip_forward = 0\\n' > "+hardeningSysctl)
		}
		defer func() {
			for _, h := range hosts {
				in.root(t, h, "rm -f "+hardeningSysctl+" && sysctl -q -w net.ipv4.ip_forward="+before[h].sysctl["net.ipv4.ip_forward"])
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	require.NoError(t, rb.Reboot(ctx, w.fleet.Name, hosts))
	for _, h := range hosts {
		in.Forget(h) // its connection died with the old boot
	}
	for _, spec := range w.views.Apply.Spec.Hosts {
		name, was := spec.Hostname, before[spec.Hostname]
		for k, v := range was.sysctl {
			assert.Equal(t, v, in.root(t, name, "sysctl -n "+k), "%s: %s after the reboot", name, k)
		}
		for _, m := range was.modules {
			_, loaded := in.try(t, name, "test -d /sys/module/"+m)
			assert.True(t, loaded, "%s: module %s loaded at boot", name, m)
		}
		assert.Empty(t, in.root(t, name, "swapon --show=NAME --noheadings"), "%s: swap stays off", name)
		body := in.root(t, name, "cat /etc/hosts")
		var peers []string
		for _, p := range w.views.Apply.Spec.Hosts {
			assert.Regexp(t, fmt.Sprintf(`(?m)^%s\s.*\b%s\b`, strings.ReplaceAll(p.PrivateAddress, ".", `\.`), p.Hostname), body, "%s: /etc/hosts lacks %s after the reboot", name, p.Hostname)
			if p.Hostname != name {
				peers = append(peers, p.PrivateAddress)
			}
		}
		fw := ""
		if was.firewalld {
			fw = in.root(t, name, "firewall-cmd --ipset="+firewall.IPSetNodes+" --get-entries")
		} else {
			fw = in.root(t, name, "nft list table "+firewall.NFTTable)
		}
		for _, p := range peers {
			assert.Contains(t, fw, p, "%s: the firewall still trusts %s", name, p)
		}
		now, _ := in.try(t, name, "getenforce")
		assert.Equal(t, was.selinux, now, "%s: SELinux mode", name)
		if w.backend == backendMicroVM {
			assert.Equal(t, "Enforcing", now, "%s: the guest enforces SELinux", name)
		}
		if was.fapolicyd {
			assert.Equal(t, "active", in.root(t, name, "systemctl is-active fapolicyd"), "%s: fapolicyd runs after the reboot", name)
		}
		if !w.stage {
			assert.Equal(t, "enabled", in.root(t, name, "systemctl is-enabled "+in.eng.Service(spec.IsController())), "%s: the engine's unit is enabled", name)
		}
	}
	if !w.stage {
		waitNodesReady(t, in, w.firstController(), len(hosts), 5*time.Minute)
	}
	// an apply after the boot: nothing to do, nothing to send
	l, err := action.Load(context.Background(), w.runOptions(pkg.Path, w.applyPath, false))
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	require.NoError(t, action.Run(context.Background(), l, w.phases()))
	t.Log("\n" + l.State.Report.Summary(false))
	rep := &reportView{l.State.Report}
	assert.Empty(t, rep.Changes(), "an apply after a reboot changes nothing")
	assert.Zero(t, rep.BytesUploaded(), "an apply after a reboot uploads nothing")
	if !w.stage {
		assertEngineLabelled(t, in, l.State, "after a reboot")
	}
}

// waitNodesReady polls the cluster from ctl until want nodes are Ready.
func waitNodesReady(t *testing.T, in *inspector, ctl string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for {
		out, ok := in.try(t, ctl, in.eng.Kubectl("get", "nodes", "-o", "json"))
		if ok {
			if nodes, err := node.ParseNodes(out); err == nil {
				ready := 0
				for _, n := range nodes {
					if n.Ready {
						ready++
					}
				}
				last = fmt.Sprintf("%d of %d nodes Ready", ready, len(nodes))
				if ready == want && len(nodes) == want {
					return
				}
			}
		} else {
			last = "the API does not answer: " + out
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the reboot, within %s: %s (want %d Ready)", within, last, want)
		}
		time.Sleep(5 * time.Second)
	}
}
