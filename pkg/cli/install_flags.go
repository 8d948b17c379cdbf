package cli

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// installFlags are the flags apply, prepare and reset share.
type installFlags struct {
	config            string
	confirm           bool
	dryRun            bool
	concurrency       int
	uploadConcurrency int
	workerConcurrency int
	updateHosts       bool
	updateFirewall    bool
	verifyKeys        []string
	lockWait          time.Duration
	skipUnready       bool
	fanout            bool
	engine            engineFlags
	output            outputFlags
}

func (f *installFlags) register(cmd *cobra.Command, app *App) {
	f.registerCommon(cmd)
	fl := cmd.Flags()
	fl.IntVar(&f.uploadConcurrency, "upload-concurrency", 0, "hosts uploaded to at once (default: --concurrency)")
	fl.IntVarP(&f.workerConcurrency, "worker-concurrency", "w", 0, "workers started or upgraded at once; 0 means all (CARGOSHIP_WORKER_CONCURRENCY)")
	fl.IntVar(&f.workerConcurrency, "work-concurrency", 0, "")
	_ = fl.MarkHidden("work-concurrency")
	fl.BoolVarP(&f.updateHosts, "update-hosts", "H", false, "write every node's name and address into /etc/hosts (CARGOSHIP_UPDATE_HOSTS)")
	fl.BoolVarP(&f.updateFirewall, "update-firewall", "F", false, "configure firewalld, ufw or nftables for the cluster (CARGOSHIP_UPDATE_FIREWALL)")
	fl.BoolVar(&f.skipUnready, "skip-unready-nodes", false, "upgrade the Ready nodes and leave nodes that are not Ready (default: stop)")
	fl.BoolVar(&f.fanout, "fanout", true, "send each file of 1 MiB or more from here once and let hosts pass it on to each other over SSH; --fanout=false sends every file from here")
	_ = app
}

// registerCommon registers the flags every command that changes hosts
// has: apply, prepare and reset.
func (f *installFlags) registerCommon(cmd *cobra.Command) {
	fl := cmd.Flags()
	registerConfig(cmd, &f.config)
	fl.BoolVar(&f.confirm, "confirm", false, "confirm that every host of the inventory may be changed")
	fl.BoolVar(&f.dryRun, "dry-run", false, "connect and check for real, then report what would change on each host and change nothing")
	// -c is --config, as in k0sctl; concurrency keeps only its long name.
	fl.IntVar(&f.concurrency, "concurrency", 0, "hosts worked on at once (default 30; CARGOSHIP_CONCURRENCY)")
	registerVerifyKey(fl, &f.verifyKeys)
	fl.DurationVar(&f.lockWait, "lock-wait", 0, "how long to wait for another cargoship's lock (default 90s)")
	f.output.register(fl)
}

// options resolves flags over settings into action options.
func (f *installFlags) options(cmd *cobra.Command, app *App, pkgPath string) (action.Options, error) {
	if err := checkConfig(f.config, "the cluster inventory to act on"); err != nil {
		return action.Options{}, err
	}
	if err := f.output.check(); err != nil {
		return action.Options{}, err
	}
	if !f.confirm && !f.dryRun {
		return action.Options{}, errors.New("this changes every host of the inventory: pass --confirm, or --dry-run to see what would change")
	}
	s := app.Settings
	fl := cmd.Flags()
	conc := s.Concurrency
	if fl.Changed("concurrency") {
		conc = f.concurrency
	}
	if conc < 0 {
		return action.Options{}, errors.New("--concurrency must be 0 (unlimited) or more")
	}
	upload := conc
	if fl.Changed("upload-concurrency") {
		upload = f.uploadConcurrency
	}
	workers := s.WorkerConcurrency
	if fl.Changed("worker-concurrency") || fl.Changed("work-concurrency") {
		workers = f.workerConcurrency
	}
	hostsUpdate, firewallUpdate := s.UpdateHosts, s.UpdateFirewall
	if fl.Changed("update-hosts") {
		hostsUpdate = f.updateHosts
	}
	if fl.Changed("update-firewall") {
		firewallUpdate = f.updateFirewall
	}
	o := action.Options{
		PackagePath: pkgPath,
		ClusterPath: f.config,
		TmpDir:      s.TmpDir,
		Log:         installLog(cmd, app),
		Phase: node.Options{
			DryRun:            f.dryRun,
			UpdateHosts:       hostsUpdate,
			UpdateFirewall:    firewallUpdate,
			Concurrency:       conc,
			UploadConcurrency: upload,
			WorkerConcurrency: workers,
			Timeout:           s.Timeout,
			LookupEnv:         app.LookupEnv,
			LockWait:          f.lockWait,
		},
	}
	o.Phase.SkipUnready = f.skipUnready
	if fl.Lookup("fanout") != nil {
		o.Phase.NoFanout = !f.fanout
	}
	if err := f.engine.apply(&o.Phase); err != nil {
		return o, err
	}
	if dir, err := filepath.Abs(filepath.Dir(f.config)); err == nil {
		o.ClusterDir = dir
	}
	if pkgPath == "" {
		if len(f.verifyKeys) > 0 {
			return o, errors.New("--verify-key checks a package, and this run has none: --distro names an engine or is not given")
		}
		return o, nil
	}
	trust, err := s.trustPolicy(f.verifyKeys)
	if err != nil {
		return o, err
	}
	o.Trust = trust
	return o, nil
}

// registerVerifyKey adds --verify-key, which apply, prepare, reset and
// inspect share.
func registerVerifyKey(fl *pflag.FlagSet, keys *[]string) {
	fl.StringArrayVar(keys, "verify-key", nil, "trust packages signed by the ed25519 public key `PUB` (PEM); repeatable; replaces the settings' trusted_keys. "+
		"An unsigned package, or one no trusted key signed, is then refused")
}
