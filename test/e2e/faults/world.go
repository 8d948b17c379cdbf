package faults

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// The suite's fleet, its own so it never meets the phase suite's e2e
// fleet, and as small as the faults allow: one controller, one worker.
const (
	fleetName  = "faults"
	controller = "kc0"
	worker     = "kw0"
)

// The blob is a file of the package big enough to be caught in the middle
// of its upload: every fault that needs an upload in flight deletes it
// from a host and applies again.
const (
	blobTarget = "/var/lib/cargoship-faults/blob"
	blobSize   = 24 << 20
)

// blobBytes is the blob: the same bytes every run.
func blobBytes() []byte {
	blob := make([]byte, blobSize)
	_, _ = io.ReadFull(rand.NewChaCha8([32]byte{'f', 'a', 'u', 'l', 't', 's'}), blob)
	return blob
}

// world is the fleet the faults act on and what the suite knows about it.
type world struct {
	prov      *container.Container
	fleet     *fleet.Fleet
	pkg       *e2eutil.TestPackage
	bin       string // the cargoship binary, built for this run
	inventory string
	hosts     []string
	in        *e2eutil.Inspector
	// index is every file of the package by where it lands on a host, and
	// its sha256 in the package's index.
	index map[string]string
	blob  string // the blob's sha256
	runs  int
}

// setUp brings up the fleet, builds the package and the binary (all three
// at once: the machine has few cores and most of it is waiting) and reads
// the package's index.
func setUp(t *testing.T) *world {
	t.Helper()
	w := &world{}
	sw := e2eutil.SetUpSuite(t, fleet.Spec{Name: fleetName, Control: 1, Worker: 1, Image: container.ImageBase}, e2eutil.SuiteNeeds{
		Binary: true,
		Build: func() {
			w.pkg = e2eutil.BuildTestPackage(t, e2eutil.EngineVersion, e2eutil.EngineVersionBuilt,
				e2eutil.PackageFile{Target: blobTarget, Perm: 0o644, Data: blobBytes()})
			w.readIndex(t)
		},
	})
	w.prov, w.fleet, w.bin, w.in = sw.Provider, sw.Fleet, sw.Bin, sw.In
	w.inventory = w.fleet.InventoryPath
	for _, h := range sw.Hosts {
		w.hosts = append(w.hosts, h.Hostname)
	}
	return w
}

// readIndex reads where every file of the package lands and its sha256
// from the package's own index (its manifest, verified as it is read).
func (w *world) readIndex(t *testing.T) {
	t.Helper()
	p, err := pkgfile.Open(w.pkg.Path, pkgfile.OpenOptions{VerifyOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	eng, err := engine.For(p.Distro.Spec.Type)
	if err != nil {
		t.Fatal(err)
	}
	w.index = map[string]string{}
	for _, e := range p.Entries() {
		target := e.Target
		switch {
		case e.Kind == pkgfile.KindImages:
			target = path.Join(eng.Paths().ImagesDir, path.Base(e.Name))
		case e.IsDirectory:
			target = path.Join(target, path.Base(e.Name))
		case target == "":
			continue
		}
		w.index[target] = e.SHA256
	}
	w.blob = w.index[blobTarget]
	if w.blob == "" {
		t.Fatalf("the package's index has no %s", blobTarget)
	}
}

// options are an in-process run's, as the CLI makes them from the flags
// startApply passes (the CLI's defaults otherwise), under its own run id.
func (w *world) options(dry bool, lockWait time.Duration, log *slog.Logger) action.Options {
	w.runs++
	return action.Options{
		PackagePath: w.pkg.Path,
		ClusterPath: w.inventory,
		ClusterDir:  path.Dir(w.inventory),
		TmpDir:      os.TempDir(),
		Log:         log,
		Phase: node.Options{
			DryRun:      dry,
			Concurrency: 30, UploadConcurrency: 30,
			Timeout:        20 * time.Minute,
			KnownHostsPath: w.fleet.KnownHostsPath,
			InstanceID:     fmt.Sprintf("faults-%d-%d", os.Getpid(), w.runs),
			LockWait:       lockWait,
			LookupEnv:      os.LookupEnv,
			// the faults are in the operator's own transfers (an sshd
			// killed under its SFTP session, the operator killed): every
			// file goes from here, as with --fanout=false
			NoFanout: true,
		},
	}
}

// run is an in-process apply (dry or not) that may fail, with its log.
func (w *world) run(t *testing.T, dry bool, lockWait time.Duration) (*node.Report, *logbook, string, error) {
	t.Helper()
	log, book := recordingLogger(t)
	o := w.options(dry, lockWait, log)
	rep, err := e2eutil.Run(t, o, action.ApplyPhases())
	return rep, book, o.Phase.InstanceID, err
}

// converged is the e2e suite's convergence check on this fleet: a dry run
// lists no work, a second apply changes nothing and uploads 0 bytes, and
// no fingerprint moves; and every host is clean.
func (w *world) converged(t *testing.T) {
	t.Helper()
	e2eutil.AssertConverged(t, w.in, w.hosts, func(dry bool) *node.Report {
		rep, _, _, err := w.run(t, dry, 0)
		if err != nil {
			t.Fatalf("a run on a converged fleet failed: %v", err)
		}
		return rep
	})
	for _, h := range w.hosts {
		w.assertClean(t, h)
	}
}

// background is an in-process apply running beside the test, for faults
// that strike while it runs.
type background struct {
	id   string
	book *logbook
	done chan struct{}
	rep  *node.Report
	err  error
}

// runBackground starts an in-process apply on its own goroutine; it never
// touches t itself but through its log, and t's clean-up waits for it.
func (w *world) runBackground(t *testing.T, lockWait time.Duration) *background {
	t.Helper()
	log, book := recordingLogger(t)
	o := w.options(false, lockWait, log)
	b := &background{id: o.Phase.InstanceID, book: book, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		l, err := action.Load(context.Background(), o)
		if err != nil {
			b.err = err
			return
		}
		defer func() { _ = l.Close() }()
		b.err = action.Run(context.Background(), l, action.ApplyPhases())
		b.rep = l.State.Report
	}()
	t.Cleanup(func() { <-b.done })
	return b
}

// wait waits for the run to end and returns its report and error.
func (b *background) wait(t *testing.T, timeout time.Duration) (*node.Report, error) {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		t.Fatalf("the apply %s still runs after %s", b.id, timeout)
	}
	if b.rep != nil {
		t.Log("\n" + b.rep.Summary(false))
	}
	return b.rep, b.err
}
