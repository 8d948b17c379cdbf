package faults

import (
	"context"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

// stagedSuffix ends the name of an executable staged beside its target
// (docs/apply.md, Uploading, staging and installing).
var stagedSuffix = strings.TrimPrefix(path.Base(node.StagedPath("/x")), ".x")

// blobPart is where the blob's upload streams on a host.
const blobPart = blobTarget + host.PartSuffix

// placedFiles reads, on a host, the sha256 of every file of the package's
// index that is there, at its target or staged beside it.
func (w *world) placedFiles(t *testing.T, h string) map[string]string {
	t.Helper()
	var paths []string
	for p := range w.index {
		paths = append(paths, p, node.StagedPath(p))
	}
	slices.Sort(paths)
	out := w.in.Root(t, h, host.Script(`for p in "$@"; do [ -f "$p" ] || continue; s=$(sha256sum < "$p"); printf '%s %s\n' "${s%% *}" "$p"; done`, paths...))
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if sum, p, ok := strings.Cut(line, " "); ok {
			got[p] = sum
		}
	}
	return got
}

// assertPlacedVerified: every file of the package on the host holds the
// sha256 the package's index gives it; nothing half-written or unverified
// is at a target or staged for one.
func (w *world) assertPlacedVerified(t *testing.T, h string) {
	t.Helper()
	for p, sum := range w.placedFiles(t, h) {
		target := p
		if strings.HasSuffix(p, stagedSuffix) {
			target = path.Join(path.Dir(p), strings.TrimSuffix(strings.TrimPrefix(path.Base(p), "."), stagedSuffix))
		}
		if want := w.index[target]; sum != want {
			t.Errorf("%s: %s has sha256 %s; the package's index says %s: placed unverified", h, p, sum, want)
		}
	}
}

// leftovers lists the partial and staged files anywhere on a host's disk,
// by path, with their sizes.
func (w *world) leftovers(t *testing.T, h string) map[string]int64 {
	t.Helper()
	out := w.in.Root(t, h, `find / -xdev \( -name '*`+host.PartSuffix+`' -o -name '*`+stagedSuffix+`' \) -printf '%s %p\n' 2>/dev/null; true`)
	got := map[string]int64{}
	for _, line := range strings.Split(out, "\n") {
		if n, p, ok := strings.Cut(line, " "); ok {
			got[p], _ = strconv.ParseInt(n, 10, 64)
		}
	}
	return got
}

// assertClean: a converged host has every file of its route verified in
// place and no partial or staged file anywhere.
func (w *world) assertClean(t *testing.T, h string) {
	t.Helper()
	w.assertPlacedVerified(t, h)
	if left := w.leftovers(t, h); len(left) > 0 {
		t.Errorf("%s: files left half-way after a converged run: %v", h, left)
	}
	placed := w.placedFiles(t, h)
	if placed[blobTarget] != w.blob {
		t.Errorf("%s: %s is not in place (sha256 %q)", h, blobTarget, placed[blobTarget])
	}
}

// lockHolder is the run id in a host's lock file; ok is false when there
// is none.
func (w *world) lockHolder(t *testing.T, h string) (string, bool) {
	t.Helper()
	out, ok := w.in.Try(t, h, host.Script(`cat -- "$1"`, phase.LockPath))
	return out, ok
}

// assertLock checks every host's lock file: holding want, or absent for
// want "".
func (w *world) assertLock(t *testing.T, want string, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		got, ok := w.lockHolder(t, h)
		switch {
		case want == "" && ok:
			t.Errorf("%s: %s still holds %q; it should have been released", h, phase.LockPath, got)
		case want != "" && (!ok || got != want):
			t.Errorf("%s: %s holds %q (present %v), want %q", h, phase.LockPath, got, ok, want)
		}
	}
}

// size is a file's size on a host, -1 when it is not there.
func (w *world) size(t *testing.T, h, p string) int64 {
	t.Helper()
	out := w.in.Root(t, h, host.Script(`stat -c %s -- "$1" 2>/dev/null || echo -1`, p))
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		t.Fatalf("%s: size of %s: %q", h, p, out)
	}
	return n
}

// waitUntil polls cond every 100ms until it holds, the run ends (done) or
// timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, done <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited %s for %s", timeout, what)
		case <-done:
			if cond() {
				return
			}
			t.Fatalf("the run ended before %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitPart waits until the blob's partial file on a host holds at least n
// bytes: its upload is under way, in the middle.
func (w *world) waitPart(t *testing.T, h string, n int64, done <-chan struct{}) {
	t.Helper()
	waitUntil(t, 2*time.Minute, done, h+": the blob's upload half-way", func() bool { return w.size(t, h, blobPart) >= n })
}

// unitState is systemctl's word for a unit on a host (active,
// activating, inactive, failed...).
func (w *world) unitState(t *testing.T, h, unit string) string {
	t.Helper()
	out, _ := w.in.Try(t, h, host.Script(`systemctl is-active -- "$1"`, unit))
	return out
}

// throttle limits what this machine sends a host (0 lifts it), lifted
// again when the test ends.
func (w *world) throttle(t *testing.T, bytesPerSecond int, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		if err := w.prov.Throttle(context.Background(), fleetName, h, bytesPerSecond); err != nil {
			t.Fatal(err)
		}
		if bytesPerSecond > 0 {
			t.Cleanup(func() { _ = w.prov.Throttle(context.Background(), fleetName, h, 0) })
		}
	}
}

// removeBlob deletes the blob from hosts, so the next apply uploads it.
func (w *world) removeBlob(t *testing.T, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		w.in.Root(t, h, host.Script(`rm -f -- "$1" "$2"`, blobTarget, blobPart))
	}
}

// cutUploads kills, on a host, the sshd process serving each SFTP session
// (the parent of every sftp-server): the connection an upload runs over
// drops at once, as a reset would drop it. It returns how many it killed.
func (w *world) cutUploads(t *testing.T, h string) int {
	t.Helper()
	out := w.in.Root(t, h, `n=0
for p in $(pgrep -x sftp-server); do
	s=$p
	while [ "$s" -gt 1 ] && [ "$(cat /proc/$s/comm)" != sshd ]; do s=$(ps -o ppid= -p "$s" | tr -d ' '); done
	[ "$s" -gt 1 ] || continue
	kill -9 "$s" && n=$((n+1))
done
echo $n`)
	n, _ := strconv.Atoi(out)
	return n
}
