// Command demo shows cargoship's main job end to end on this machine with no
// network: it builds a package around the cargoship test engine (a test
// double for k3s), brings up three Debian hosts as systemd-nspawn
// containers, and runs the real CLI against them: create, inspect, apply
// --dry-run, apply, and a second apply that must change nothing.
//
//	./hack/demo.sh [-keep] [-fleet NAME] [-workers N]
//	./hack/demo.sh -down [-fleet NAME]
//
// docs/demo.md says what each step does and what to expect.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
)

// options are the demo's flags.
type options struct {
	keep    bool
	down    bool
	fleet   string
	workers int
}

func main() {
	var o options
	flag.BoolVar(&o.keep, "keep", false, "leave the fleet up at the end (and print how to log in and tear it down)")
	flag.BoolVar(&o.down, "down", false, "only tear down the fleet named by -fleet, then exit")
	flag.StringVar(&o.fleet, "fleet", "demo", "name of the fleet to bring up (lower-case letters and digits)")
	flag.IntVar(&o.workers, "workers", 2, "number of worker hosts besides the one controller")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo takes no arguments (got %q); see -h\n", flag.Args())
		os.Exit(2)
	}
	os.Exit(run(o))
}

// run returns the process exit code: 0 when every step passed.
func run(o options) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "The demo brings up its hosts as systemd-nspawn containers, which needs root.\n"+
			"Run it as: ./hack/demo.sh (it runs itself again through sudo when you are not root)")
		return 1
	}
	if o.workers < 0 || o.workers > 20 {
		fmt.Fprintf(os.Stderr, "-workers %d: want 0 to 20\n", o.workers)
		return 2
	}
	root, err := repo.Root()
	if err != nil {
		fmt.Fprintf(os.Stderr, "run the demo inside the cargoship checkout (%v)\n", err)
		return 1
	}
	// Paths are printed relative to the repository, and the commands the
	// demo shows are meant to be pasted there.
	if err := os.Chdir(root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctx, stopSignals := interruptContext()
	defer stopSignals()

	if o.down {
		if err := fleetDown(o.fleet); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			return 1
		}
		return 0
	}

	d := &demo{opts: o, root: root, dir: filepath.Join(root, "build", "demo"), start: time.Now()}
	err = d.steps(ctx)
	// Teardown runs on success, failure and interrupt alike; it gets its
	// own context because ctx may be the reason we are here.
	if terr := d.teardown(); terr != nil {
		err = errors.Join(err, terr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "\nDEMO FAILED after %s: %v\n", since(d.start), err)
		return 1
	}
	fmt.Printf("\nDemo finished in %s: every step passed.\n", since(d.start))
	return 0
}

// interruptContext is cancelled by the first SIGINT or SIGTERM. cargoship
// runs in its own process group (see command), so the terminal's Ctrl-C
// reaches only the demo, which passes exactly one interrupt on: cargoship
// then cleans up (lock, sessions, summary) instead of exiting at once. A
// second interrupt is passed on too, which makes cargoship exit now; the
// fleet is torn down either way.
func interruptContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		fmt.Fprintln(os.Stderr, "\ninterrupted: stopping the current step, then tearing the fleet down (interrupt again to stop cargoship at once)")
		cancel()
		for range ch {
			interruptChildren()
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
