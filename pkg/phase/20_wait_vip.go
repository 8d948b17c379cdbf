package phase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/retry"
	"github.com/colonel-byte/cargoship/pkg/shell"
	"github.com/colonel-byte/cargoship/pkg/vip"
)

// vipPoll is how often the wait asks the VIP again.
const vipPoll = 2 * time.Second

// WaitVIP waits, after the controllers are up and before any manifest (the
// CNI) is applied, until the cluster's VIP answers TLS with the cluster's
// CA (docs/ha.md, The order): a CNI pointed at the VIP would otherwise come
// up against an address nothing announces. On a converged cluster it is one
// probe.
type WaitVIP struct {
	base
	vip *v1alpha1.VIP
}

// Title implements Phase.
func (p *WaitVIP) Title() string { return "Wait for the VIP" }

// DryRunMode implements DryRunDeclarer: it only reads, so a dry run asks
// too, and says so when no controller runs yet.
func (*WaitVIP) DryRunMode() DryRunMode { return ReadOnly }

// Prepare implements Preparer.
func (p *WaitVIP) Prepare(context.Context) error {
	p.vip = p.state.Cluster.Spec.Config.VIP
	return nil
}

// ShouldRun implements Conditional.
func (p *WaitVIP) ShouldRun() bool { return p.vip != nil }

// Run implements Phase.
func (p *WaitVIP) Run(ctx context.Context) error {
	s := p.state
	from := s.KubectlHost()
	if from == nil {
		if s.Options.DryRun {
			s.Report.Note("the VIP %s is brought up once a controller runs the engine; the dry run cannot ask it yet", p.vip.IP())
			return nil
		}
		return fmt.Errorf("no controller runs %s to reach the VIP %s from", s.Engine.Name(), p.vip.IP())
	}
	probe := s.Engine.Kubectl("--server="+apiURL(p.vip.IP(), s.Engine.APIPort()), "--request-timeout=5s", "get", "--raw=/readyz")
	timeout := p.vip.Timeout()
	if s.Options.DryRun {
		timeout = vipPoll
	}
	start := time.Now()
	var last error
	err := retry.Do(ctx, retry.Policy{Wait: vipPoll, Timeout: timeout}, func(ctx context.Context) error {
		_, err := from.Conn.Sudo(ctx, probe)
		last = err
		return err
	})
	if err == nil {
		s.Logger().Info("the VIP answers TLS with the cluster's CA", "vip", p.vip.IP(), "from", from.String(), "after", time.Since(start).Round(time.Millisecond))
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	if s.Options.DryRun {
		s.Report.Note("the VIP %s does not answer TLS with the cluster's CA from %s yet: %v", p.vip.IP(), from, last)
		return nil
	}
	return p.timeoutError(ctx, from, timeout, last)
}

// timeoutError names the provider, the host that should hold the address,
// and what the provider logged there.
func (p *WaitVIP) timeoutError(ctx context.Context, from *node.Host, timeout time.Duration, last error) error {
	s := p.state
	ip := p.vip.IP()
	head := fmt.Sprintf("the VIP %s (spec.config.vip, provider %s) does not answer TLS with the cluster's CA from %s after %s: %v", ip, p.vip.ProviderName(), from, timeout, last)
	switch p.vip.ProviderName() {
	case v1alpha1.VIPKeepalived:
		holder := p.keepalivedHolder()
		if holder == nil {
			return fmt.Errorf("%s; no controller runs its API server, so none may hold it", head)
		}
		log := tail(ctx, holder, shell.Join("journalctl", "--no-pager", "-n", "30", "-u", vip.Service))
		return fmt.Errorf("%s; %s should hold it (the first controller in keepalived's priority order whose API server runs); keepalived there logged:\n%s", head, holder, log)
	default:
		lease, _ := s.Kubectl(ctx, "-n", engine.KubeVIPNamespace, "get", "lease", engine.KubeVIPLease, "-o", "jsonpath={.spec.holderIdentity}")
		holder := strings.TrimSpace(lease)
		if holder == "" {
			holder = "no controller (nobody holds the lease " + engine.KubeVIPNamespace + "/" + engine.KubeVIPLease + ")"
		}
		pods, err := s.Kubectl(ctx, "-n", engine.KubeVIPNamespace, "get", "pods", "-l", engine.KubeVIPSelector, "-o", "wide")
		if err != nil {
			pods = err.Error()
		}
		logs, err := s.Kubectl(ctx, "-n", engine.KubeVIPNamespace, "logs", "-l", engine.KubeVIPSelector, "--tail=20", "--prefix")
		if err != nil {
			logs = err.Error()
		}
		return fmt.Errorf("%s; the kube-vip leader should hold it: %s. Its pods:\n%s\nThey logged:\n%s", head, holder, pods, logs)
	}
}

// keepalivedHolder is the controller that should hold a keepalived VIP: the
// first in priority order whose engine runs.
func (p *WaitVIP) keepalivedHolder() *node.Host {
	s := p.state
	for _, spec := range vip.Order(s.Cluster) {
		for _, h := range s.Hosts.Controllers() {
			if h.Spec == spec && h.Conn != nil && (h.EngineRunning || h.Started) {
				return h
			}
		}
	}
	return nil
}

// tail runs a read-only command for a failure message.
func tail(ctx context.Context, h *node.Host, cmd string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	out, err := h.Conn.Sudo(ctx, cmd)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return out
}
