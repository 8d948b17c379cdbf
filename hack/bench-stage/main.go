// Command bench-stage measures cargoship's stage walk (apply's staging half:
// connect, facts, lock, host preparation, /etc/hosts, firewall, uploads,
// engine config) against an Ansible playbook doing the same work, each on
// a fresh fleet of container hosts, cold and then converged.
//
//	sudo go run ./hack/bench-stage [-hosts 10] [-runs 3]
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
)

type config struct {
	hosts, runs int
	keep        bool
	only        string
	strategy    string
	profile     bool
	work        string
	log         *slog.Logger // detailed log: fleet, cargoship, this program
	logFile     string
}

func main() {
	var c config
	flag.IntVar(&c.hosts, "hosts", 10, "hosts per fleet: 1 controller and hosts-1 workers")
	flag.IntVar(&c.runs, "runs", 3, "fresh-fleet runs per tool (medians are printed)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory (package, playbook, logs)")
	flag.StringVar(&c.only, "only", "", `measure one tool only: "cargoship" or "ansible"`)
	flag.StringVar(&c.strategy, "strategy", "linear", "Ansible strategy: linear or free")
	flag.BoolVar(&c.profile, "profile", false, "log Ansible's per-task times (profile_tasks) in its logs")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench-stage:", err)
		os.Exit(1)
	}
}

func run(c config) (err error) {
	if c.hosts < 2 || c.runs < 1 {
		return fmt.Errorf("-hosts must be at least 2 and -runs at least 1")
	}
	if c.only != "" && c.only != "cargoship" && c.only != "ansible" {
		return fmt.Errorf("-only is cargoship or ansible, not %q", c.only)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the fleet needs root: run it with sudo")
	}
	if _, err := exec.LookPath("ansible-playbook"); err != nil && c.only != "cargoship" {
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
	lf, err := os.Create(c.logFile)
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
	a, err := prepareAnsible(ctx, c, pkg)
	if err != nil {
		return err
	}

	var res results
	for i := 1; i <= c.runs; i++ {
		if c.only != "ansible" {
			r, err := cargoshipRun(ctx, c, pkg, i)
			if err != nil {
				return err
			}
			res.cargoship = append(res.cargoship, r)
		}
		if c.only != "cargoship" {
			r, err := ansibleRun(ctx, c, a, i)
			if err != nil {
				return err
			}
			res.ansible = append(res.ansible, r)
		}
	}
	if res.cargoship != nil && res.ansible != nil {
		if diffs := compareStates(res.cargoship[0].state, res.ansible[0].state); len(diffs) > 0 {
			say("end states differ (%d):\n  %s", len(diffs), strings.Join(diffs, "\n  "))
		} else {
			say("end states match on every host (files, modes, rendered config, /etc/hosts block, sysctls, nft table)")
		}
	}
	fmt.Println()
	if err := res.print(os.Stdout, c); err != nil {
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
