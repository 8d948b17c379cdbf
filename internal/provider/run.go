package provider

import (
	"context"
	"os"
	"time"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// runner runs cargoship's actions for the resource, in process: the same
// code `cargoship apply` and `cargoship reset` run, with the document in
// memory.
type runner struct {
	trust         pkgfile.TrustPolicy
	knownHosts    string
	knownHostsSet bool
	tmpDir        string
	lookupEnv     func(string) (string, bool)
}

// run is one action over one document.
type run struct {
	model   *clusterModel
	inv     *inventory
	pkgPath string // "" runs with no package (a reset finds the engine)
	engine  string // the engine without a package; "" finds it on the hosts
	phases  []phase.Phase
	dry     bool
	targets []string // a reset's hosts, by node name; none is every host
	timeout time.Duration
}

// env reads the environment, with known_hosts from the provider block
// standing in for SSH_KNOWN_HOSTS when it is set.
func (r *runner) env(name string) (string, bool) {
	if name == "SSH_KNOWN_HOSTS" && r.knownHostsSet {
		return r.knownHosts, true
	}
	return r.lookupEnv(name)
}

// options are the run's, as the CLI makes them from its flags.
func (r *runner) options(ctx context.Context, x run) action.Options {
	m := x.model
	dir, _ := os.Getwd()
	conc := 30
	if !m.Concurrency.IsNull() {
		conc = int(m.Concurrency.ValueInt64())
	}
	o := action.Options{
		PackagePath: x.pkgPath,
		Engine:      x.engine,
		ClusterPath: "cargoship_cluster." + m.Name.ValueString(),
		ClusterData: x.inv.Data,
		ClusterDir:  dir,
		Trust:       r.trust,
		TmpDir:      r.tmpDir,
		Log:         newRunLogger(ctx),
		Phase: node.Options{
			DryRun:            x.dry,
			UpdateHosts:       m.UpdateHosts.ValueBool(),
			UpdateFirewall:    m.UpdateFirewall.ValueBool(),
			Concurrency:       conc,
			UploadConcurrency: conc,
			WorkerConcurrency: int(m.WorkerConcurrency.ValueInt64()),
			Timeout:           x.timeout,
			LookupEnv:         r.env,
			LabelNodes:        m.LabelNodes.ValueBool(),
			TargetHosts:       x.targets,
			InstanceID:        "tofu-" + action.InstanceID(),
			// unset is the CLI's default, on
			NoFanout: !m.Fanout.IsNull() && !m.Fanout.ValueBool(),
		},
	}
	if x.pkgPath == "" {
		o.Trust = pkgfile.TrustPolicy{}
	} else {
		o.Engine = ""
	}
	return o
}

// do loads the documents and walks the phases; the report is returned
// also after a failure, for what did change.
func (r *runner) do(ctx context.Context, x run) (*node.Report, error) {
	l, err := action.Load(ctx, r.options(ctx, x))
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.Close() }()
	err = action.Run(ctx, l, x.phases)
	return l.State.Report, err
}

// refresh reads the hosts' engines and the cluster's nodes.
func (r *runner) refresh(ctx context.Context, x run) (*action.Status, error) {
	l, err := action.Load(ctx, r.options(ctx, x))
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.Close() }()
	return action.Refresh(ctx, l)
}
