package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// rawPath is where the raw transfer writes on each host; removed after.
const rawPath = "/var/tmp/bench-raw"

// payloads are the bytes one host of each role receives from the package,
// and a file of that many bytes for the raw transfer to send.
type payloads struct {
	controller, worker         int64
	controllerFile, workerFile string
}

// readPayloads sums what each role gets from the package and writes the
// raw transfer's files under dir: pseudo-random, so incompressible as the
// binary is (ssh does not compress by default anyway).
func readPayloads(entries []pkgfile.Entry, dir string) (payloads, error) {
	p := payloads{
		controller: payloadBytes(entries, benchTarget(true)),
		worker:     payloadBytes(entries, benchTarget(false)),
	}
	p.controllerFile = filepath.Join(dir, "raw-controller.bin")
	p.workerFile = filepath.Join(dir, "raw-worker.bin")
	if err := writeRandom(p.controllerFile, p.controller); err != nil {
		return p, err
	}
	return p, writeRandom(p.workerFile, p.worker)
}

// perHost is one host's payload, the largest (a controller's).
func (p payloads) perHost() int64 { return max(p.controller, p.worker) }

func writeRandom(name string, size int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	r := rand.NewChaCha8([32]byte{'r', 'a', 'w'})
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Close()
}

// rawTransfer times `ssh host 'cat > rawPath'` of each host's payload to
// every host of f at once, with the system ssh client and the fleet's key
// and known_hosts: the wire speed an upload phase is measured against. The
// files are removed afterwards, untimed.
func rawTransfer(ctx context.Context, f *fleet.Fleet, p payloads) (time.Duration, error) {
	start := time.Now()
	var g errgroup.Group
	for _, h := range f.Hosts {
		file := p.workerFile
		if h.Role == fleet.RoleController {
			file = p.controllerFile
		}
		g.Go(func() error { return sshCat(ctx, f, h, file) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	d := time.Since(start)
	for _, h := range f.Hosts {
		g.Go(func() error {
			if out, err := exec.CommandContext(ctx, "ssh", sshArgs(f, h, "rm -f "+rawPath)...).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: removing %s: %w: %s", h.Name, rawPath, err, out)
			}
			return nil
		})
	}
	return d, g.Wait()
}

// sshCat sends file to h's rawPath through cat.
func sshCat(ctx context.Context, f *fleet.Fleet, h fleet.Host, file string) error {
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	cmd := exec.CommandContext(ctx, "ssh", sshArgs(f, h, "cat > "+rawPath)...)
	cmd.Stdin = in // a file: ssh reads it directly, no copy through this process
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("raw transfer to %s: %w: %s", h.Name, err, out)
	}
	return nil
}

// sshArgs logs in as root with the fleet's key, checks the host key
// against the fleet's known_hosts, and reads no ssh_config: no
// multiplexing or compression from a user's settings colours the number.
func sshArgs(f *fleet.Fleet, h fleet.Host, remote string) []string {
	addr, port := h.Address, 22
	if h.SSHAddress != "" {
		addr = h.SSHAddress
	}
	if h.SSHPort != 0 {
		port = h.SSHPort
	}
	return []string{"-F", "/dev/null", "-i", f.KeyPath, "-p", strconv.Itoa(port),
		"-o", "UserKnownHostsFile=" + f.KnownHostsPath, "-o", "StrictHostKeyChecking=yes",
		"-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		fleet.UserRoot + "@" + addr, remote}
}

// packagePayloads reads what each host gets from the package and writes
// the raw transfer's files.
func packagePayloads(ctx context.Context, c config, pkgPath string) (payloads, error) {
	p, err := pkgfile.OpenContext(ctx, pkgPath, pkgfile.OpenOptions{TmpDir: c.work})
	if err != nil {
		return payloads{}, err
	}
	defer func() { _ = p.Close() }() // only removes the package's temp files under the work directory
	pl, err := readPayloads(p.Entries(), c.work)
	if err != nil {
		return pl, fmt.Errorf("raw transfer payload: %w", err)
	}
	say("one host's payload: %s (controller), %s (worker)", node.HumanBytes(pl.controller), node.HumanBytes(pl.worker))
	return pl, nil
}
