package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// vipMoveBudget is how long the VIP may take to move off a controller whose
// power is cut (the bound: keepalived notices in about three
// advertisement intervals).
const vipMoveBudget = 10 * time.Second

// TestVIPFailoverWithKeepalived brings up three controllers and a worker
// with a keepalived VIP (docs/ha.md): the founder takes the address once
// its API server answers, the other controllers join through the founder,
// the worker through the VIP. Then the controller holding it loses power:
// the VIP moves within vipMoveBudget, kubectl through it still answers from
// a surviving controller, and an apply that still lists the dead controller
// names it instead of hanging. Powered back on, the cluster is as apply
// left it: another apply changes nothing.
func TestVIPFailoverWithKeepalived(t *testing.T) {
	const name = "e2evip"
	var vip string
	of := newOwnFleet(t, name, fleet.Spec{Control: 3, Worker: 1}, 20*time.Minute, func(c *v1alpha1.Cluster, f *fleet.Fleet) {
		vip = spareAddress(t, f)
		c.Spec.Config.Loadbalancer = "" // the VIP becomes the API address
		c.Spec.Config.VIP = &v1alpha1.VIP{Address: vip, Provider: v1alpha1.VIPKeepalived}
	})
	w, f, distro, ctx := of.w, of.fleet, of.distro, of.ctx
	var power fleet.PowerSwitch = of.prov
	in := newInspector(t, w)
	pkg := e2eutil.BuildDistroPackageWith(t, distro, distro.Version, distro.Built,
		e2eutil.PackageOptions{ControllerDebs: e2eutil.HostDebs(t, "keepalived")})

	rep := runWhole(t, w, pkg.Path, w.applyPath, false)
	var founded, joined []string
	for _, ch := range rep.Ordered() {
		switch {
		case strings.HasSuffix(ch.What, "and found the cluster"):
			founded = append(founded, ch.Host)
		case strings.HasSuffix(ch.What, "and join as a controller"):
			joined = append(joined, ch.Host)
		}
	}
	assert.Equal(t, []string{"kc0"}, founded, "one founder")
	assert.ElementsMatch(t, []string{"kc1", "kc2"}, joined)
	kc0, err := f.Host("kc0")
	require.NoError(t, err)
	for _, h := range []string{"kc1", "kc2"} {
		assert.Contains(t, in.engineConfig(t, h), fmt.Sprintf("server: https://%s:%d", kc0.Address, in.eng.JoinPort()), "%s joined through the founder during the cold bootstrap", h)
	}
	assert.Contains(t, in.engineConfig(t, "kw0"), fmt.Sprintf("server: https://%s:%d", vip, in.eng.JoinPort()), "the worker joined through the VIP")
	assert.Equal(t, []string{"kc0"}, vipHolders(t, in, vip), "the first controller in priority order holds the VIP")
	ca := clusterCA(t, w.kubeconfig)
	require.NoError(t, dialVIP(vip, ca), "the VIP answers TLS with the cluster's CA")
	assert.Len(t, kubectlNodes(t, w.kubeconfig), 4, "kubectl through the VIP (the exported kubeconfig) lists every node")

	again := runWhole(t, w, pkg.Path, w.applyPath, false)
	assert.Empty(t, again.Changes(), "a second apply on the converged cluster changes nothing")
	assert.Zero(t, again.BytesUploaded())

	// Cut the holder's power and time the move.
	require.NoError(t, power.PowerOff(ctx, name, "kc0"))
	cut := time.Now()
	var moved time.Duration
	for time.Since(cut) < 3*vipMoveBudget {
		if dialVIP(vip, ca) == nil {
			moved = time.Since(cut)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.NotZero(t, moved, "the VIP did not answer again within %s of kc0's power cut", 3*vipMoveBudget)
	t.Logf("the VIP answered again %s after kc0 lost power", moved.Round(time.Millisecond))
	assert.LessOrEqual(t, moved, vipMoveBudget, "the VIP moves within %s", vipMoveBudget)
	holders := vipHolders(t, in, vip, "kc1", "kc2")
	assert.Equal(t, []string{"kc1"}, holders, "the next controller in priority order holds the VIP")
	var nodes []string
	require.Eventually(t, func() bool {
		nodes = kubectlNodesOrNil(w.kubeconfig)
		return len(nodes) == 4
	}, time.Minute, time.Second, "kubectl through the VIP answers from a surviving controller")

	// apply with the dead controller still listed: a named failure, soon.
	start := time.Now()
	_, err = e2eutil.Run(t, w.runOptions(pkg.Path, w.applyPath, false), w.phases())
	took := time.Since(start)
	require.Error(t, err, "an apply cannot converge a fleet with a dead controller")
	assert.Contains(t, err.Error(), "kc0", "the failure names the dead controller")
	assert.Less(t, took, 3*time.Minute, "the apply fails instead of hanging")
	t.Logf("apply with kc0 powered off failed after %s: %v", took.Round(time.Second), err)

	// Back on: the engine and keepalived start at boot, and nothing is
	// left for apply to do.
	require.NoError(t, power.PowerOn(ctx, name, "kc0"))
	in = newInspector(t, w) // the old one's session to kc0 died with it
	require.Eventually(t, func() bool {
		n, ok := clusterNodes(t, in, "kc1")["kc0"]
		return ok && n.Ready
	}, 3*time.Minute, 2*time.Second, "kc0 Ready again after boot")
	back := runWhole(t, w, pkg.Path, w.applyPath, false)
	assert.Empty(t, back.Changes(), "an apply after kc0 is back changes nothing")
	assert.Len(t, vipHolders(t, in, vip), 1, "one controller holds the VIP")
}

// spareAddress is an address of the fleet's subnet no host and no gateway
// has: the top of the /24, below broadcast.
func spareAddress(t *testing.T, f *fleet.Fleet) string {
	t.Helper()
	p, err := netip.ParsePrefix(f.Subnet)
	require.NoError(t, err)
	a := p.Addr().As4()
	a[3] = 250
	vip := netip.AddrFrom4(a).String()
	for _, h := range f.Hosts {
		require.NotEqual(t, vip, h.Address, "the fleet uses .250")
	}
	return vip
}

// vipHolders lists the controllers (all three, or those named) whose eth0
// carries the VIP.
func vipHolders(t *testing.T, in *inspector, vip string, hosts ...string) []string {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"kc0", "kc1", "kc2"}
	}
	var out []string
	for _, h := range hosts {
		if strings.Contains(in.root(t, h, "ip -o addr show dev eth0"), " "+vip+"/") {
			out = append(out, h)
		}
	}
	return out
}

// clusterCA is the CA of the kubeconfig apply exported.
func clusterCA(t *testing.T, kubeconfig string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(kubeconfig)
	require.NoError(t, err)
	var kc struct {
		Clusters []struct {
			Cluster struct {
				Server string `yaml:"server"`
				CA     string `yaml:"certificate-authority-data"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
	}
	require.NoError(t, yaml.Unmarshal(b, &kc))
	require.NotEmpty(t, kc.Clusters)
	pem, err := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CA)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem), "the kubeconfig's CA parses")
	return pool
}

// dialVIP completes a TLS handshake with the API at the VIP, verifying its
// certificate against the cluster's CA for the VIP's address.
func dialVIP(vip string, ca *x509.CertPool) error {
	d := &net.Dialer{Timeout: time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(vip, "6443"), &tls.Config{RootCAs: ca, ServerName: vip, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return conn.Close()
}

// kubectlNodes runs this machine's kubectl with the exported kubeconfig,
// whose server is the VIP.
func kubectlNodes(t *testing.T, kubeconfig string) []string {
	t.Helper()
	out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--request-timeout=10s", "get", "nodes", "-o", "name").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.Fields(string(out))
}

func kubectlNodesOrNil(kubeconfig string) []string {
	out, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "--request-timeout=5s", "get", "nodes", "-o", "name").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// TestKubeVIPIsDeployedAndItsWaitNamed walks a kube-vip VIP on one
// controller: cargoship writes kube-vip's manifests into the engine's
// auto-deploy directory before the engine starts, and the engine applies
// them. The test engine stores them but runs no pods, so no kube-vip
// announces the address: the wait for the VIP must end at its timeout with
// the named error (provider, lease, pods), and the manifests (DaemonSet,
// ServiceAccount, RBAC) are read back from the API as rendered.
func TestKubeVIPIsDeployedAndItsWaitNamed(t *testing.T) {
	var vip string
	of := newOwnFleet(t, "e2ekvip", fleet.Spec{Control: 1}, 10*time.Minute, func(c *v1alpha1.Cluster, f *fleet.Fleet) {
		vip = spareAddress(t, f)
		c.Spec.Config.Loadbalancer = ""
		c.Spec.Config.VIP = &v1alpha1.VIP{Address: vip, WaitTimeout: "20s"}
	})
	w, distro := of.w, of.distro
	in := newInspector(t, w)
	// The package's one image stands in for kube-vip's: nothing runs it.
	pkg := e2eutil.BuildDistroPackageWith(t, distro, distro.Version, distro.Built,
		e2eutil.PackageOptions{Config: "    kubeVip:\n      image: " + e2eutil.ImageRef + "\n"})

	rep, err := e2eutil.Run(t, w.runOptions(pkg.Path, w.applyPath, false), w.phases())
	require.Error(t, err, "no kube-vip runs, so the VIP never answers")
	for _, want := range []string{`phase "Wait for the VIP"`, "the VIP " + vip, "provider kube-vip", "after 20s", engine.KubeVIPLease} {
		assert.Contains(t, err.Error(), want)
	}
	var started bool
	for _, ch := range rep.Ordered() {
		started = started || strings.HasSuffix(ch.What, "and found the cluster")
	}
	assert.True(t, started, "the founder came up before the wait")

	manifest := in.root(t, "kc0", "cat "+engine.KubeVIPManifestPath(in.eng))
	assert.Contains(t, manifest, "value: "+vip, "the rendered DaemonSet announces the VIP")
	ds := in.root(t, "kc0", in.eng.Kubectl("-n", engine.KubeVIPNamespace, "get", "daemonset", engine.KubeVIPDaemonSet, "-o", "jsonpath={.spec.template.spec.containers[0].env}"))
	assert.Contains(t, ds, vip, "the engine applied the DaemonSet from its manifests directory, with the VIP")
	assert.Contains(t, ds, "127.0.0.1", "kube-vip reaches the API on its own node")
	for _, obj := range []string{
		"serviceaccount/" + engine.KubeVIPServiceAccount,
		"role.rbac.authorization.k8s.io/kube-vip",
		"rolebinding.rbac.authorization.k8s.io/kube-vip",
	} {
		assert.Equal(t, obj, strings.TrimSpace(in.root(t, "kc0", in.eng.Kubectl("-n", engine.KubeVIPNamespace, "get", obj, "-o", "name"))), "kube-vip's %s is in the cluster", obj)
	}
	// its rights end at its own lease in kube-system (docs/security.md)
	for _, kind := range []string{"clusterrole", "clusterrolebinding"} {
		names := in.root(t, "kc0", in.eng.Kubectl("get", kind, "-o", "name"))
		assert.NotContains(t, names, "kube-vip", "kube-vip has no %s", kind)
	}
}
