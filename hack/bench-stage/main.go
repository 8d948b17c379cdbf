// Command bench-stage measures cargoship's stage walk (apply's staging half:
// connect, facts, lock, host preparation, /etc/hosts, firewall, uploads,
// engine config) on fresh fleets of container hosts, cold and then
// converged, at one or more fleet sizes: against the raw ssh transfer of
// the same bytes, with its egress, peak RSS and round trips per host, and
// against an Ansible playbook doing the same work.
//
//	sudo go run ./hack/bench-stage [-hosts 2,10,20] [-ansible-hosts 10] [-runs 3]
//
// See docs/bench.md for what is compared and the measured numbers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Fleet names this benchmark owns; other engineers use e2e, demo and dev.
const (
	fleetCargoship = "bench"
	fleetAnsible   = "benchans"
	fleetDirect    = "benchdir"
)

type config struct {
	hosts        []int // fleet sizes, one table row each
	ansibleHosts []int // the sizes Ansible also runs at
	runs         int
	keep         bool
	only         string
	strategy     string
	profile      bool
	linkMbit     int // this machine's link to the fleet, Mbit/s; 0: unshaped
	work         string
	log          *slog.Logger // detailed log: fleet, cargoship, this program
	logFile      string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == walkCmd {
		os.Exit(walkMain(os.Args[2:]))
	}
	var c config
	var hosts, ansibleHosts string
	flag.StringVar(&hosts, "hosts", "10", "hosts per fleet, a comma list (2,10,20): 1 controller and hosts-1 workers; one row each")
	flag.StringVar(&ansibleHosts, "ansible-hosts", "10", "the -hosts counts Ansible runs at too, a comma list")
	flag.IntVar(&c.runs, "runs", 3, "fresh-fleet runs per tool (medians are printed)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory (package, playbook, logs)")
	flag.StringVar(&c.only, "only", "", `measure one tool only: "cargoship" or "ansible"`)
	flag.StringVar(&c.strategy, "strategy", "linear", "Ansible strategy: linear or free")
	flag.IntVar(&c.linkMbit, "link-mbit", 0, "put this machine behind a link of N Mbit/s to the fleets (tc tbf on the fleet bridge; hosts reach each other unshaped); 0: unshaped")
	flag.BoolVar(&c.profile, "profile", false, "log Ansible's per-task times (profile_tasks) in its logs")
	flag.Parse()
	var err error
	if c.hosts, err = parseCounts(hosts); err != nil {
		fmt.Fprintln(os.Stderr, "bench-stage: -hosts:", err)
		os.Exit(2)
	}
	if c.ansibleHosts, err = parseCounts(ansibleHosts); err != nil {
		fmt.Fprintln(os.Stderr, "bench-stage: -ansible-hosts:", err)
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-stage:", err)
		os.Exit(1)
	}
}

func run(c config) (err error) {
	if c.runs < 1 {
		return fmt.Errorf("-runs must be at least 1")
	}
	if c.only != "" && c.only != "cargoship" && c.only != "ansible" {
		return fmt.Errorf("-only is cargoship or ansible, not %q", c.only)
	}
	if c.only == "ansible" && !c.runsAnsible() {
		return fmt.Errorf("-only ansible, and Ansible runs only at the -ansible-hosts counts %v, none of which is in -hosts %v", c.ansibleHosts, c.hosts)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the fleet needs root: run it with sudo")
	}
	if _, err := exec.LookPath("ansible-playbook"); err != nil && c.runsAnsible() {
		return fmt.Errorf("ansible-playbook not found: sudo apt-get install ansible")
	}
	// Interrupts cancel the context, so the deferred teardowns still run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	work, err := os.MkdirTemp("", "cargoship-bench-stage-")
	if err != nil {
		return err
	}
	c.work = work
	c.logFile = filepath.Join(work, "bench.log")
	// appending: the walk children append their logs to the same file
	lf, err := os.OpenFile(c.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	c.log = slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	defer func() {
		// A failed run keeps its logs: its error names them.
		if c.keep || err != nil {
			fmt.Printf("work directory kept: %s\n", work)
			return
		}
		_ = os.RemoveAll(work) // best effort: the results are printed already
	}()

	startLoad := loadAvg()
	say("load average at start: %s (%d cores); details in %s", startLoad, cores(), c.logFile)
	t := time.Now()
	pkg, err := buildPackage(ctx, filepath.Join(work, "pkg"))
	if err != nil {
		return err
	}
	say("package built in %s: %s", since(t), pkg)
	var payload payloads
	if c.only != "ansible" {
		if payload, err = packagePayloads(ctx, c, pkg); err != nil {
			return err
		}
	}
	var a *ansible
	if c.runsAnsible() {
		if a, err = prepareAnsible(ctx, c, pkg); err != nil {
			return err
		}
	}

	var counts []countResults
	for _, n := range c.hosts {
		cr, err := measureCount(ctx, c, pkg, payload, a, n)
		if err != nil {
			return err
		}
		counts = append(counts, cr)
	}
	fmt.Println()
	if err := printResults(os.Stdout, c, counts); err != nil {
		return err
	}
	fmt.Printf("load average at start: %s, at end: %s (%d cores)\n", startLoad, loadAvg(), cores())
	return nil
}

// say prints a progress line with the time of day.
func say(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// loadAvg is /proc/loadavg's three averages: on a shared 2-core machine
// they say more about a run's noise than anything else.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cores() int { return runtime.NumCPU() }
