package phase

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
)

// SyncConfig brings the engine config of nodes that already ran before this
// run back to what the package and inventory describe. Configure engine
// leaves running nodes alone; here a node whose start-time config
// (config.yaml, registries, audit policy, pod security, kubelet config)
// drifted is drained, stopped, rewritten, started and uncordoned. Chart
// values are written in place: the engine reconciles them while it runs.
// So is a config.yaml whose only change is node-label or node-taint: the
// engine reads those when the node registers, so a restart would apply
// nothing (docs/reference/engines.md 3.4); phase 29 sets them through the
// API.
type SyncConfig struct {
	controllers bool
	base
	drift map[*node.Host]configDrift
}

// NewSyncConfigController is phase 26: controllers, one at a time.
func NewSyncConfigController() *SyncConfig { return &SyncConfig{controllers: true} }

// NewSyncConfigWorker is phase 27: workers, in batches of
// Options.WorkerConcurrency.
func NewSyncConfigWorker() *SyncConfig { return &SyncConfig{} }

// Title implements Phase.
func (p *SyncConfig) Title() string {
	if p.controllers {
		return "Sync Registry Config Controller"
	}
	return "Sync Registry Config Worker"
}

// Prepare implements Preparer: it renders the files of every node of its
// role that ran before this run and compares them with the node's own.
func (p *SyncConfig) Prepare(ctx context.Context) error {
	s := p.state
	p.drift = map[*node.Host]configDrift{}
	hosts := s.Hosts.Filter(func(h *node.Host) bool {
		return h.IsController() == p.controllers && s.RanBefore(h)
	})
	if len(hosts) == 0 {
		return nil
	}
	rendered, err := s.RenderAll(ctx, hosts)
	if err != nil {
		return err
	}
	classify := syncClassifier(s.Engine)
	p.drift, err = node.Map(ctx, hosts, s.Options.Concurrency, func(ctx context.Context, h *node.Host) (configDrift, bool, error) {
		r, ok := rendered[h]
		if !ok {
			s.Logger().Debug("not rendered: no config to compare", "host", h.String(), "phase", p.Title())
			return configDrift{}, false, nil
		}
		have := map[string]string{}
		registrationOnly := map[string]bool{}
		for _, f := range r.Files {
			if classify(f.Path) == syncNone {
				continue
			}
			sum, _, err := host.FileSHA256(ctx, h.Conn, f.Path)
			if err != nil {
				return configDrift{}, false, err
			}
			have[f.Path] = sum
			if f.Path == s.Engine.Paths().Config && sum != "" && sum != sha256Hex(f.Content) {
				old, err := host.ReadFile(ctx, h.Conn, f.Path)
				if err != nil {
					return configDrift{}, false, err
				}
				registrationOnly[f.Path] = engine.OnlyRegistrationDiffers(s.Engine, old, f.Content)
			}
		}
		d := findDrift(r.Files, have, classify, registrationOnly)
		return d, !d.empty(), nil
	})
	return err
}

// ShouldRun implements Conditional: a node with no drift is not touched.
func (p *SyncConfig) ShouldRun() bool { return len(p.drift) > 0 }

// Plan implements Planner: per node, the files that drifted.
func (p *SyncConfig) Plan(context.Context) ([]node.Change, error) {
	var out []node.Change
	for _, h := range p.hosts() {
		d := p.drift[h]
		if len(d.restart) > 0 {
			out = append(out, node.Change{Host: h.String(), What: fmt.Sprintf("drain, stop, rewrite %s, start and uncordon (drifted)", filePaths(d.restart))})
		}
		for _, f := range d.inPlace {
			out = append(out, node.Change{Host: h.String(), What: fmt.Sprintf("rewrite %s in place (drifted chart values)", f.Path)})
		}
		for _, f := range d.registration {
			out = append(out, node.Change{Host: h.String(), What: fmt.Sprintf("rewrite %s in place, no restart (only node-label/node-taint drifted: read at registration, set through the API by phase 29)", f.Path)})
		}
	}
	return out, nil
}

// Run implements Phase.
func (p *SyncConfig) Run(ctx context.Context) error {
	if p.controllers {
		return p.hosts().Sequential(ctx, p.sync)
	}
	return p.hosts().Batches(ctx, p.state.Options.WorkerConcurrency, p.sync)
}

// sync writes a node's drifted chart values and registration-only config,
// then restarts it around its drifted start-time files, when any drifted.
func (p *SyncConfig) sync(ctx context.Context, h *node.Host) error {
	s, d := p.state, p.drift[h]
	inPlace := append(append([]engine.File(nil), d.inPlace...), d.registration...)
	if err := s.WriteRendered(ctx, h, p.Title(), engine.Rendered{Files: inPlace}); err != nil {
		return err
	}
	if len(d.restart) == 0 {
		return nil
	}
	s.Logger().Info("engine config drifted: restarting the node", "host", h.String(), "files", filePaths(d.restart))
	err := s.Restart(ctx, h, "", func(ctx context.Context) error {
		return s.WriteRendered(ctx, h, p.Title(), engine.Rendered{Files: d.restart})
	})
	if err != nil {
		return fmt.Errorf("restarting for its drifted config: %w", err)
	}
	s.Report.Add(node.Change{Host: h.String(), Phase: p.Title(), What: "restarted " + s.Engine.Service(h.IsController()) + " for its new config (drained, then uncordoned)"})
	return nil
}

// hosts are the nodes with drift, in inventory order.
func (p *SyncConfig) hosts() node.Hosts {
	return p.state.Hosts.Filter(func(h *node.Host) bool { _, ok := p.drift[h]; return ok })
}

// syncClass is what the sync phases do with a rendered file.
type syncClass int

const (
	// syncNone files are not synced: tokens, and files a restart would
	// not apply.
	syncNone syncClass = iota
	// syncRestart files are read when the engine starts.
	syncRestart
	// syncInPlace files (chart values; upstream's registry hosts) are read
	// by the running engine.
	syncInPlace
)

// syncClassifier sorts an engine's rendered files by path.
func syncClassifier(e engine.Engine) func(string) syncClass {
	p := e.Paths()
	restart := []string{p.Config, p.Registries, p.AuditPolicy, p.PodSecurity, p.KubeletConfig}
	inPlace := []string{p.ManifestsDir}
	if e.Name() == v1alpha1.EngineUpstream {
		// containerd reads certs.d on every pull. kubeadm reads its config
		// and kubelet patch at init and join only, and the API server is a
		// static pod: restarting the kubelet would apply none of them.
		restart, inPlace = nil, []string{p.Registries}
	}
	return func(path string) syncClass {
		for _, d := range inPlace {
			if pathWithin(path, d) {
				return syncInPlace
			}
		}
		for _, r := range restart {
			if pathWithin(path, r) {
				return syncRestart
			}
		}
		return syncNone
	}
}

// pathWithin says path is dir or lies under it (upstream's registries are a
// directory of hosts.toml files).
func pathWithin(path, dir string) bool {
	return dir != "" && (path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/"))
}

// configDrift is what differs between a node's rendered files and its own.
type configDrift struct {
	restart []engine.File
	inPlace []engine.File
	// registration are start-time files that differ only in what the
	// engine reads at registration: rewritten, never restarted for.
	registration []engine.File
}

func (d configDrift) empty() bool {
	return len(d.restart) == 0 && len(d.inPlace) == 0 && len(d.registration) == 0
}

// findDrift compares rendered files with the node's checksums by path ("" or
// absent: the node has no such file) and keeps the synced ones that differ.
// registrationOnly names start-time files whose change is only what the
// engine reads at registration.
func findDrift(files []engine.File, have map[string]string, classify func(string) syncClass, registrationOnly map[string]bool) configDrift {
	var d configDrift
	for _, f := range files {
		if have[f.Path] == sha256Hex(f.Content) {
			continue
		}
		switch classify(f.Path) {
		case syncRestart:
			if registrationOnly[f.Path] {
				d.registration = append(d.registration, f)
				continue
			}
			d.restart = append(d.restart, f)
		case syncInPlace:
			d.inPlace = append(d.inPlace, f)
		}
	}
	return d
}

// filePaths lists files by path, for messages (never their content: some
// hold a token).
func filePaths(files []engine.File) string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return strings.Join(out, ", ")
}
