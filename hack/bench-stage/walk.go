package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// walkCmd is the hidden subcommand the benchmark re-executes itself with
// for each cargoship walk: a process of its own, so its peak RSS is the
// walk's (ru_maxrss), not the benchmark's with its fleets and package
// build.
const walkCmd = "__walk"

// walkResult is what a walk child writes for the benchmark to read.
type walkResult struct {
	Walk       time.Duration      // the phases, as runCargoship times them
	Load       time.Duration      // opening and verifying the package, not counted in Walk
	Timings    []node.PhaseTiming // per phase, in run order
	RoundTrips []node.RoundTrip   // per phase and host
	BytesSent  int64              // bytes uploaded from this machine (the report's)
	Relayed    int                // files a host got from another host (fan-out)
	Changes    int
	Error      string `json:",omitempty"`

	// MaxRSS is the child's peak resident set in bytes, from the
	// parent's rusage; not written by the child.
	MaxRSS int64 `json:"-"`
}

// walkArgs is where the child finds the fleet and package and writes its
// result.
type walkArgs struct {
	pkg, inventory, knownHosts, tmp, out, log string
	noFanout                                  bool
}

func (a walkArgs) flags() []string {
	return []string{walkCmd, "-pkg", a.pkg, "-inventory", a.inventory, "-known-hosts", a.knownHosts,
		"-tmp", a.tmp, "-out", a.out, "-log", a.log, "-no-fanout=" + strconv.FormatBool(a.noFanout)}
}

// walkMain is the child: one stage walk, its result as JSON in -out. It
// exits non-zero only when it cannot write that result.
func walkMain(args []string) int {
	var a walkArgs
	fs := flag.NewFlagSet(walkCmd, flag.ContinueOnError)
	fs.StringVar(&a.pkg, "pkg", "", "package")
	fs.StringVar(&a.inventory, "inventory", "", "cluster document")
	fs.StringVar(&a.knownHosts, "known-hosts", "", "known_hosts file")
	fs.StringVar(&a.tmp, "tmp", "", "temporary directory")
	fs.StringVar(&a.out, "out", "", "result file")
	fs.StringVar(&a.log, "log", "", "log file (appended to)")
	fs.BoolVar(&a.noFanout, "no-fanout", false, "every file from here (--fanout=false)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	lf, err := os.OpenFile(a.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-stage walk:", err)
		return 1
	}
	defer lf.Close()
	log := slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// the parent interrupts a walk it gives up on: the manager then
	// releases the locks as an interrupted apply does
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := runCargoship(ctx, a, log)
	if err != nil {
		res.Error = err.Error()
	}
	b, err := json.Marshal(res)
	if err == nil {
		err = os.WriteFile(a.out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-stage walk: writing the result:", err)
		return 1
	}
	return 0
}

// runCargoship walks apply's staging half over a fleet, as
// `cargoship apply --update-hosts --update-firewall` would up to the
// engine's start. Loading (opening and verifying the package) is not timed:
// the brief measures the walk; it is reported beside it.
func runCargoship(ctx context.Context, a walkArgs, log *slog.Logger) (walkResult, error) {
	var res walkResult
	start := time.Now()
	l, err := action.Load(ctx, action.Options{
		PackagePath: a.pkg,
		ClusterPath: a.inventory,
		ClusterDir:  filepath.Dir(a.inventory),
		TmpDir:      a.tmp,
		Log:         log,
		Phase: node.Options{
			UpdateHosts:       true,
			UpdateFirewall:    true,
			Concurrency:       concurrency,
			UploadConcurrency: concurrency,
			KnownHostsPath:    a.knownHosts,
			LookupEnv:         os.LookupEnv,
			NoFanout:          a.noFanout,
		},
	})
	if err != nil {
		return res, fmt.Errorf("loading: %w", err)
	}
	defer func() { _ = l.Close() }() // removes the extracted copy; nothing to report
	res.Load = time.Since(start)
	start = time.Now()
	err = action.Run(ctx, l, action.StagePhases())
	res.Walk = time.Since(start)
	rep := l.State.Report
	res.Timings, res.RoundTrips = rep.Timings(), rep.RoundTrips()
	res.BytesSent, res.Changes = rep.BytesUploaded(), len(rep.Changes())
	for _, c := range rep.Changes() {
		if strings.Contains(c.What, ", relayed from ") {
			res.Relayed++
		}
	}
	if err != nil {
		return res, fmt.Errorf("stage walk: %w", err)
	}
	return res, nil
}

// walkChild runs one walk in a child process over fleet f and returns its
// result with the child's peak RSS.
func walkChild(ctx context.Context, c config, f *fleet.Fleet, pkg, name string, noFanout bool) (walkResult, error) {
	self, err := os.Executable()
	if err != nil {
		return walkResult{}, fmt.Errorf("finding this program to re-run: %w", err)
	}
	a := walkArgs{pkg: pkg, inventory: f.InventoryPath, knownHosts: f.KnownHostsPath, tmp: c.work,
		out: filepath.Join(c.work, name+".json"), log: c.logFile, noFanout: noFanout}
	cmd := exec.CommandContext(ctx, self, a.flags()...)
	// interrupted, the walk cleans up as apply does; killed if it hangs
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	out, err := cmd.CombinedOutput()
	if err != nil {
		return walkResult{}, fmt.Errorf("walk child: %w: %s", err, out)
	}
	var res walkResult
	b, err := os.ReadFile(a.out)
	if err != nil {
		return res, fmt.Errorf("reading the walk's result: %w", err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return res, fmt.Errorf("reading the walk's result %s: %w", a.out, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.MaxRSS = ru.Maxrss << 10 // Linux reports KiB
	}
	if res.Error != "" {
		return res, errors.New(res.Error)
	}
	return res, nil
}
