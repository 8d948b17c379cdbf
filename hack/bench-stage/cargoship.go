package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// concurrency is cargoship's default (settings: 30) and Ansible's forks.
const concurrency = 30

// runCargoship walks apply's staging half over a fleet, as
// `cargoship apply --update-hosts --update-firewall` would up to the
// engine's start. Loading (opening and verifying the package) is not timed:
// the brief measures the walk; it is reported beside it.
func runCargoship(ctx context.Context, f *fleet.Fleet, pkg, tmp string, log *slog.Logger) (walk, load time.Duration, rep *node.Report, err error) {
	start := time.Now()
	l, err := action.Load(ctx, action.Options{
		PackagePath: pkg,
		ClusterPath: f.InventoryPath,
		ClusterDir:  filepath.Dir(f.InventoryPath),
		TmpDir:      tmp,
		Log:         log,
		Phase: node.Options{
			UpdateHosts:       true,
			UpdateFirewall:    true,
			Concurrency:       concurrency,
			UploadConcurrency: concurrency,
			KnownHostsPath:    f.KnownHostsPath,
			LookupEnv:         os.LookupEnv,
		},
	})
	if err != nil {
		return 0, 0, nil, fmt.Errorf("loading: %w", err)
	}
	defer func() { _ = l.Close() }() // removes the extracted copy; nothing to report
	load = time.Since(start)
	start = time.Now()
	if err := action.Run(ctx, l, action.StagePhases()); err != nil {
		return 0, load, nil, fmt.Errorf("stage walk: %w", err)
	}
	return time.Since(start), load, l.State.Report, nil
}

// slowest names the n slowest phases of a walk, for seeing where the time
// goes without reading the log.
func slowest(rep *node.Report, n int) string {
	ts := rep.Timings()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Duration > ts[j].Duration })
	var out []string
	for _, t := range ts[:min(n, len(ts))] {
		out = append(out, fmt.Sprintf("%s %.1fs", t.Title, t.Duration.Seconds()))
	}
	return strings.Join(out, ", ")
}
