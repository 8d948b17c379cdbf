package cluster

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// The reset phases' titles the assertions sort a report's lines by
// (docs/reset.md, "The phases").
const (
	phaseDrain     = "Drain and delete the nodes"
	phaseUninstall = "Stop and uninstall"
	phaseForget    = "Forget the removed hosts"
	phaseRepoint   = "Repoint the staying nodes"
)

// resetOptions are the options `cargoship reset` runs with: the suite's
// run options, the package the cluster was installed from (every file it
// placed is removed too) or, without one, the run's engine named as
// --distro names it, and the hosts --target-hosts names (none: the whole cluster).
func (w *world) resetOptions(pkgPath, inventory string, targets []string, dry bool) action.Options {
	o := w.runOptions(pkgPath, inventory, dry)
	if pkgPath == "" {
		o.Engine = w.distro.Name
	}
	o.Phase.TargetHosts = targets
	return o
}

// runReset runs a reset the way the CLI does and returns its report.
func runReset(t *testing.T, w *world, pkgPath, inventory string, targets []string, dry bool) *reportView {
	t.Helper()
	l, err := action.Load(context.Background(), w.resetOptions(pkgPath, inventory, targets, dry))
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	require.NoError(t, action.Run(context.Background(), l, action.ResetPhases()))
	t.Log("\n" + l.State.Report.Summary(dry))
	return &reportView{l.State.Report}
}

// errAtLoad marks a reset refused while its inputs were loaded, before any
// host was connected to.
var errAtLoad = errors.New("refused when loading")

// tryReset runs a reset that is expected to be refused and returns its
// error, wrapped in errAtLoad when action.Load refused it.
func tryReset(t *testing.T, w *world, pkgPath, inventory string, targets []string) error {
	t.Helper()
	l, err := action.Load(context.Background(), w.resetOptions(pkgPath, inventory, targets, false))
	if err != nil {
		return fmt.Errorf("%w: %w", errAtLoad, err)
	}
	defer func() { _ = l.Close() }()
	err = action.Run(context.Background(), l, action.ResetPhases())
	if err == nil {
		t.Log("\n" + l.State.Report.Summary(false))
	}
	return err
}

// resetRefusal is one reset that must be refused: the hosts it names and
// the words the error must hold (the hosts and the rule).
type resetRefusal struct {
	name    string
	targets []string
	words   []string
	// atLoad says the refusal comes from action.Load, before any host is
	// connected to.
	atLoad bool
}

// expectResetRefusals runs each refusal and proves that none of them
// changed a byte on any host of the document.
func expectResetRefusals(t *testing.T, w *world, in *inspector, pkgPath string, cases []resetRefusal) {
	t.Helper()
	hosts := hostnames(w)
	before := fingerprints(t, in, hosts)
	for _, rc := range cases {
		run(t, rc.name, func(t *testing.T) {
			err := tryReset(t, w, pkgPath, w.allPath, rc.targets)
			require.Error(t, err, "a reset of %v is refused", rc.targets)
			assert.Equal(t, rc.atLoad, errors.Is(err, errAtLoad), "refused when loading, before any connection: %v", err)
			for _, word := range rc.words {
				assert.Contains(t, err.Error(), word, "the refusal names the host and the rule")
			}
			t.Logf("refused as expected: %v", firstLines(err.Error(), 3))
		})
	}
	for _, h := range hosts {
		sameFingerprint(t, h, before[h], in.fingerprint(t, h), "a refused reset changed a byte")
	}
}

// hostnames are the hostnames of the document that holds every host.
func hostnames(w *world) []string {
	var out []string
	for _, h := range w.views.All.Spec.Hosts {
		out = append(out, h.Hostname)
	}
	return out
}

// addressOf is the private address the inventory gives a host: what
// cargoship writes into /etc/hosts, the firewalls and server: lines.
func addressOf(t *testing.T, w *world, hostname string) string {
	t.Helper()
	for _, h := range w.views.All.Spec.Hosts {
		if h.Hostname == hostname {
			require.NotEmpty(t, h.PrivateAddress, "%s has a privateAddress", hostname)
			return h.PrivateAddress
		}
	}
	t.Fatalf("no host %q in the inventory", hostname)
	return ""
}

// fingerprints fingerprints each of hosts.
func fingerprints(t *testing.T, in *inspector, hosts []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, h := range hosts {
		out[h] = in.fingerprint(t, h)
	}
	return out
}

// mentions reports whether text names addr as a whole address: 10.0.0.2
// is not mentioned by 10.0.0.20.
func mentions(text, addr string) bool {
	return regexp.MustCompile(`(^|[^0-9.])` + regexp.QuoteMeta(addr) + `([^0-9.]|\.?$)`).MatchString(text)
}

// linesMentioning are the lines of text that name addr.
func linesMentioning(text, addr string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if mentions(l, addr) {
			out = append(out, l)
		}
	}
	return out
}

// assertForgotten checks that no survivor lists the removed host's address
// in /etc/hosts or trusts it in any firewall front end.
func assertForgotten(t *testing.T, in *inspector, survivors []string, removed, addr string) {
	t.Helper()
	for _, h := range survivors {
		assert.Empty(t, linesMentioning(in.root(t, h, "cat /etc/hosts"), addr), "%s: /etc/hosts still lists %s (%s)", h, removed, addr)
		assert.Empty(t, linesMentioning(firewallDump(t, in, h), addr), "%s: the firewall still trusts %s (%s)", h, removed, addr)
	}
}

// removedPaths is everything a reset with pkg takes off a host: the
// engine's removal list (docs/reset.md, "What a reset removes"),
// cargoship's own directories, and every target the package's index
// places (the engine binary, its kubectl, units, scripts, package files
// and common files). Links are the paths removed only when they are
// symbolic links.
func removedPaths(t *testing.T, pkg *testPackage) (paths, links []string) {
	t.Helper()
	rm := pkg.Distro.Engine().Removal()
	paths = append(append(paths, rm.Files...), rm.Dirs...)
	paths = append(paths, node.ConfigDir, node.StateDir)
	for _, e := range pkg.Entries {
		if e.Target == "" || e.Kind != pkgfile.KindFiles && e.Kind != pkgfile.KindOS {
			continue // images go into the engine's images directory, on the removal list
		}
		target := e.Target
		if e.IsDirectory {
			target = path.Join(target, path.Base(e.Name))
		}
		paths = append(paths, target)
	}
	slices.Sort(paths)
	return slices.Compact(paths), rm.Links
}

// assertUninstalled checks, from inside the host, that it holds none of
// what a reset removes, runs no engine process and has no engine unit, and
// that the node password the engine wrote stays (docs/reset.md, "What
// stays").
func assertUninstalled(t *testing.T, in *inspector, pkg *testPackage, hostname string) {
	t.Helper()
	paths, links := removedPaths(t, pkg)
	script := `for p in ` + strings.Join(paths, " ") + `; do if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi; done; ` +
		`for p in ` + strings.Join(links, " ") + `; do if [ -L "$p" ]; then echo "$p -> $(readlink "$p")"; fi; done`
	left := in.root(t, hostname, script)
	assert.Empty(t, left, "%s: still present after the reset", hostname)

	eng := pkg.Distro.Engine()
	procs, running := in.try(t, hostname, "pgrep -a "+eng.Name())
	assert.False(t, running, "%s: an engine process still runs:\n%s", hostname, procs)
	for _, unit := range slices.Concat(eng.Services(true), eng.Services(false)) {
		_, has := in.try(t, hostname, "systemctl cat "+unit+" >/dev/null 2>&1")
		assert.False(t, has, "%s: systemd still knows %s", hostname, unit)
	}
	_, kept := in.try(t, hostname, "test -d /etc/rancher/node")
	assert.True(t, kept, "%s: /etc/rancher/node (the node password, not cargoship's) stays", hostname)
}

// unexpectedElsewhere lists the report lines on hosts other than targets
// whose phase is not one of allowed.
func unexpectedElsewhere(rep *reportView, targets []string, allowed ...string) []string {
	var out []string
	for _, c := range rep.Changes() {
		if slices.Contains(targets, c.Host) || slices.Contains(allowed, c.Phase) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: [%s] %s", c.Host, c.Phase, c.What))
	}
	return out
}

// linesOn are the report lines of one host, as "[phase] what".
func linesOn(rep *reportView, hostname string) []string {
	var out []string
	for _, c := range rep.Changes() {
		if c.Host == hostname {
			out = append(out, "["+c.Phase+"] "+c.What)
		}
	}
	return out
}

// hasLine reports whether one of lines holds every one of words.
func hasLine(lines []string, words ...string) bool {
	return slices.ContainsFunc(lines, func(l string) bool {
		for _, w := range words {
			if !strings.Contains(l, w) {
				return false
			}
		}
		return true
	})
}

// resetWalk takes the join host out of the cluster and puts it back, then
// takes the whole cluster down (docs/e2e.md, "reset"). pkg is the package
// the cluster runs; fresh are the fingerprints taken before the first
// apply.
func resetWalk(t *testing.T, w *world, in *inspector, pkg *testPackage, fresh map[string]string) {
	ctl := w.firstController()
	run(t, "refusals", func(t *testing.T) {
		var ctls []string
		for _, h := range w.views.All.Spec.Hosts {
			if h.IsController() {
				ctls = append(ctls, h.Hostname)
			}
		}
		cases := []resetRefusal{
			{name: "unknown target", targets: []string{"ghost"}, words: []string{`"ghost"`, "names no host"}, atLoad: true},
		}
		// Every controller of the cluster named while the workers stay:
		// one running controller trips the every-controller rule, more
		// than one the one-per-run rule first.
		if len(ctls) == 1 {
			cases = append(cases, resetRefusal{name: "every running controller", targets: ctls,
				words: []string{ctls[0], "every running controller", "stay"}})
		} else {
			cases = append(cases, resetRefusal{name: "running controllers in one run", targets: ctls,
				words: append(slices.Clone(ctls), "one controller per run")})
		}
		expectResetRefusals(t, w, in, pkg.Path, cases)
	})

	target := w.views.Join
	if target == "" {
		w.standDown(t, "reset of one host", envJoinHost+" is unset: there is no held-out host to take out and join again")
	} else if !run(t, "one host", func(t *testing.T) { resetOneHost(t, w, in, pkg, target, ctl) }) {
		t.Fatalf("taking %s out and back failed: the whole reset would start from a cluster in an unknown state", target)
	}

	run(t, "whole", func(t *testing.T) { resetWhole(t, w, in, pkg, fresh) })
}

// resetOneHost takes target out of the cluster (dry run first), checks it
// is gone from the cluster, the survivors and its own disk, that apply
// without it has nothing to do, then joins it again.
func resetOneHost(t *testing.T, w *world, in *inspector, pkg *testPackage, target, ctl string) {
	hosts := hostnames(w)
	survivors := slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return h == target })
	addr := addressOf(t, w, target)
	controller := false
	for _, h := range w.views.All.Spec.Hosts {
		controller = controller || h.Hostname == target && h.IsController()
	}
	unit, paths := in.eng.Service(controller), in.eng.Paths()

	if !run(t, "dry run", func(t *testing.T) {
		// what apply placed is in the target's placement record, root's
		// alone; a reset removes what it lists (docs/reset.md)
		assert.Equal(t, "600 root", in.root(t, target, "stat -c '%a %U' "+node.PlacedRecord), "%s: the placement record", target)
		before := fingerprints(t, in, hosts)
		dry := runReset(t, w, pkg.Path, w.allPath, []string{target}, true)
		for _, n := range dry.r.Notes() {
			assert.NotContains(t, n, "would leave", "every file apply placed is still as placed, so the reset takes it")
		}
		for _, h := range hosts {
			sameFingerprint(t, h, before[h], in.fingerprint(t, h), "a reset dry run changed a byte")
		}
		on := linesOn(dry, target)
		expect := [][]string{
			{phaseDrain, "cordon and drain node " + target}, {phaseDrain, "stop " + unit}, {phaseDrain, "delete node " + target},
			{phaseUninstall, "stop and disable " + unit}, {phaseUninstall, "remove " + paths.Binary},
			{phaseUninstall, "remove " + paths.DataDir},
		}
		// cargoship's state directory holds its package record and the
		// package files of the APT and RPM routes: a package whose every
		// host takes the binary route leaves none to remove.
		if _, has := in.try(t, target, "test -e "+node.StateDir); has {
			expect = append(expect, []string{phaseUninstall, "remove " + node.StateDir})
		}
		for _, words := range expect {
			assert.True(t, hasLine(on, words...), "the dry run names %q on %s; it lists:\n%s", words, target, strings.Join(on, "\n"))
		}
		for _, l := range on {
			assert.True(t, strings.HasPrefix(l, "["+phaseDrain+"]") || strings.HasPrefix(l, "["+phaseUninstall+"]"), "%s: %s", target, l)
		}
		assert.Empty(t, unexpectedElsewhere(dry, []string{target}, phaseForget, phaseRepoint), "a survivor is named for more than forgetting %s or a repoint", target)
		for _, h := range survivors {
			assert.True(t, hasLine(linesOn(dry, h), phaseForget), "%s: the dry run names forgetting %s", h, target)
		}
	}) {
		t.FailNow()
	}

	if !run(t, "reset", func(t *testing.T) {
		rep := runReset(t, w, pkg.Path, w.allPath, []string{target}, false)
		assert.True(t, hasLine(linesOn(rep, target), phaseDrain, "drained, stopped and deleted node "+target), "the node was drained and deleted:\n%s", strings.Join(linesOn(rep, target), "\n"))
		assert.Empty(t, unexpectedElsewhere(rep, []string{target}, phaseForget, phaseRepoint), "a survivor changed for more than forgetting %s or a repoint", target)
		for _, c := range rep.Changes() {
			assert.Zero(t, c.Bytes, "%s: a reset uploads nothing: [%s] %s", c.Host, c.Phase, c.What)
		}
	}) {
		t.FailNow()
	}

	run(t, "gone", func(t *testing.T) {
		nodes := clusterNodes(t, in, ctl)
		assert.NotContains(t, nodes, target, "the node is deleted from the cluster, not left NotReady")
		assert.Len(t, nodes, len(survivors), "the cluster keeps every other node")
		for name, n := range nodes {
			assert.True(t, n.Ready, "%s Ready", name)
			assert.False(t, n.Unschedulable, "%s schedulable", name)
		}
		assertForgotten(t, in, survivors, target, addr)
		assertUninstalled(t, in, pkg, target)
	})

	run(t, "apply without it", func(t *testing.T) {
		dry := runWhole(t, w, pkg.Path, w.applyPath, true)
		var work []string
		for _, c := range dry.Changes() {
			work = append(work, fmt.Sprintf("%s: [%s] %s", c.Host, c.Phase, c.What))
		}
		assert.Empty(t, work, "an apply of the inventory without %s names no work", target)
	})

	if !run(t, "join again", func(t *testing.T) { joinWalk(t, w, in, pkg) }) {
		t.FailNow()
	}

	run(t, "converged", func(t *testing.T) {
		again := runWhole(t, w, pkg.Path, w.allPath, false)
		assert.Empty(t, again.Changes(), "an apply after the host joined again changes nothing")
		assert.Zero(t, again.BytesUploaded(), "an apply after the host joined again uploads nothing")
	})
}

// resetAllows lists what may differ between a host before cargoship first
// touched it and after a whole reset, each with why. Anything else that
// differs fails the walk.
var resetAllows = []struct {
	prefix, why string
}{
	// The node password the engine wrote when the node first registered:
	// it is the engine's, not cargoship's, and a node that joins again
	// needs the same one (docs/reset.md, "What stays";
	// docs/reference/behaviour.md, "Removing a host").
	{"/etc/rancher/node/", "the engine's node password stays by design"},
	// Policy modules, booleans and file contexts phase 11 installed:
	// the engine's packages and other software rely on them
	// (docs/reset.md, "What stays").
	{"/etc/selinux/", "SELinux policy stays by design"},
}

// fingerprintDiff lists the fingerprint lines that appear on one side only,
// as "-line" (before only) and "+line" (after only), less the allowed
// differences; allowed lists those it let through.
func fingerprintDiff(before, after string) (diff, allowed []string) {
	count := map[string]int{}
	for _, l := range strings.Split(before, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(after, "\n") {
		count[l]--
	}
	for l, n := range count {
		if n == 0 {
			continue
		}
		sign := "+"
		if n > 0 {
			sign = "-"
		}
		p := fingerprintPath(l)
		if slices.ContainsFunc(resetAllows, func(a struct{ prefix, why string }) bool { return strings.HasPrefix(p, a.prefix) }) {
			allowed = append(allowed, sign+l)
			continue
		}
		diff = append(diff, sign+l)
	}
	slices.Sort(diff)
	slices.Sort(allowed)
	return diff, allowed
}

// fingerprintPath is the path a fingerprint line is about: "<sha256>  path"
// for a file, "path -> target" for a link, "" for the nftables line.
func fingerprintPath(line string) string {
	if p, _, ok := strings.Cut(line, " -> "); ok {
		return p
	}
	if _, p, ok := strings.Cut(line, "  "); ok {
		return p
	}
	return ""
}

// resetWhole takes the whole cluster down and checks every host is back to
// what it was before the first apply, less the allowed differences; a
// second whole reset then has nothing to do.
func resetWhole(t *testing.T, w *world, in *inspector, pkg *testPackage, fresh map[string]string) {
	hosts := hostnames(w)
	// a relay key a killed apply left on the first host: reset removes it
	stale := staleRelayLine(t)
	plantRelayLine(t, w, in, hosts[0], stale)
	run(t, "dry run", func(t *testing.T) {
		before := fingerprints(t, in, hosts)
		dry := runReset(t, w, pkg.Path, w.allPath, nil, true)
		for _, h := range hosts {
			sameFingerprint(t, h, before[h], in.fingerprint(t, h), "a whole reset dry run changed a byte")
			assert.True(t, hasLine(linesOn(dry, h), phaseUninstall, "remove "+in.eng.Paths().Binary), "%s: the dry run names the uninstall", h)
			assert.Equal(t, h == hosts[0], hasLine(linesOn(dry, h), phaseUninstall, "remove 1 peer relay key left by a killed run"),
				"%s: the dry run names the relay key a killed run left, on %s only", h, hosts[0])
		}
		assert.Equal(t, stale, relayLinesOn(t, in, hosts[0]), "%s: the dry run left the relay key where it was", hosts[0])
		assert.Empty(t, unexpectedElsewhere(dry, hosts), "only the document's hosts are named")
		for _, c := range dry.Changes() {
			assert.NotEqual(t, phaseDrain, c.Phase, "a whole reset drains nothing: %s %s", c.Host, c.What)
		}
	})

	if !run(t, "reset", func(t *testing.T) { runReset(t, w, pkg.Path, w.allPath, nil, false) }) {
		t.FailNow()
	}

	run(t, "clean", func(t *testing.T) {
		for _, h := range hosts {
			assertUninstalled(t, in, pkg, h)
			assert.Empty(t, relayLinesOn(t, in, h), "%s: a relay key is still authorized after the reset", h)
			now := in.fingerprint(t, h)
			snap, ok := fresh[h]
			if !ok {
				w.standDown(t, h+" back to its first state", "no fingerprint was taken before the first apply (dry-run-fresh did not run)")
				continue
			}
			diff, allowed := fingerprintDiff(snap, now)
			for _, l := range allowed {
				t.Logf("%s: differs, allowed: %s", h, l)
			}
			assert.Empty(t, diff, "%s: differs from before the first apply (-before only, +after only)", h)
		}
	})

	run(t, "again", func(t *testing.T) {
		before := fingerprints(t, in, hosts)
		again := runReset(t, w, "", w.allPath, nil, false)
		assert.Empty(t, again.Changes(), "a second whole reset changes nothing")
		for _, h := range hosts {
			sameFingerprint(t, h, before[h], in.fingerprint(t, h), "a second whole reset changed a byte")
		}
	})
}

// configOf is a host's engine config as the host holds it.
func configOf(t *testing.T, in *inspector, hostname string) string {
	t.Helper()
	return in.engineConfig(t, hostname)
}

// assertFirstServer checks a controller's engine config is the cluster's
// first server's: it joins through no server, and it holds what the
// engine's own Repoint makes of it for a first server (cluster-init: true
// on k3s; rke2 has no such key), so the walk does not restate the engine's
// rules (docs/reset.md).
func assertFirstServer(t *testing.T, in *inspector, cfg, why string) {
	t.Helper()
	assert.NotContains(t, cfg, "server:", "%s: it joins through none", why)
	rp, ok := in.eng.(engine.Repointer)
	require.True(t, ok, "%s nodes name the server they joined through", in.eng.Name())
	first, err := rp.Repoint([]byte(cfg), "", true)
	require.NoError(t, err)
	var want, got map[string]any
	require.NoError(t, yaml.Unmarshal(first, &want))
	require.NoError(t, yaml.Unmarshal([]byte(cfg), &got))
	assert.Equal(t, want, got, "%s: the config is a first server's", why)
}

// removeFounder takes the cluster's first server out of a cluster of
// three controllers and a worker: the first staying controller becomes the
// first server, every survivor that joined through the founder joins
// through it, and the cluster keeps its other nodes Ready.
func removeFounder(t *testing.T, w *world, in *inspector, pkg *testPackage, founder, next string) {
	hosts := hostnames(w)
	survivors := slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return h == founder })
	founderAddr, nextAddr := addressOf(t, w, founder), addressOf(t, w, next)
	named := map[string]bool{}
	for _, h := range survivors {
		named[h] = engine.ServerOf([]byte(configOf(t, in, h))) == founderAddr
	}

	rep := runReset(t, w, pkg.Path, w.allPath, []string{founder}, false)
	assert.Empty(t, unexpectedElsewhere(rep, []string{founder}, phaseForget, phaseRepoint), "a survivor changed for more than forgetting %s or a repoint", founder)

	assertFirstServer(t, in, configOf(t, in, next), next+" is the cluster's first server now")
	assert.True(t, hasLine(linesOn(rep, next), phaseRepoint, "first server"), "%s was repointed:\n%s", next, strings.Join(linesOn(rep, next), "\n"))
	for _, h := range survivors {
		if h == next {
			continue
		}
		got := engine.ServerOf([]byte(configOf(t, in, h)))
		if named[h] {
			assert.Equal(t, nextAddr, got, "%s joined through %s and joins through %s now", h, founder, next)
			assert.True(t, hasLine(linesOn(rep, h), phaseRepoint, "join through "+nextAddr), "%s was repointed:\n%s", h, strings.Join(linesOn(rep, h), "\n"))
		} else {
			assert.NotEqual(t, founderAddr, got, "%s still names %s", h, founder)
			assert.False(t, hasLine(linesOn(rep, h), phaseRepoint), "%s did not name %s and is left alone", h, founder)
		}
	}

	nodes := clusterNodes(t, in, next)
	assert.NotContains(t, nodes, founder, "the node is deleted from the cluster, not left NotReady")
	assert.Len(t, nodes, len(survivors))
	for name, n := range nodes {
		assert.True(t, n.Ready, "%s Ready", name)
		assert.False(t, n.Unschedulable, "%s schedulable", name)
	}
	assertForgotten(t, in, survivors, founder, founderAddr)
	assertUninstalled(t, in, pkg, founder)
}

// addFounderBack applies the whole inventory again after removeFounder: the
// old founder joins through the new first server, as any new controller
// does, and a further apply changes nothing.
func addFounderBack(t *testing.T, w *world, in *inspector, pkg *testPackage, founder, next string) {
	nextAddr := addressOf(t, w, next)
	runWhole(t, w, pkg.Path, w.allPath, false)
	assert.Equal(t, nextAddr, engine.ServerOf([]byte(configOf(t, in, founder))), "%s joins through the new first server %s", founder, next)
	assertFirstServer(t, in, configOf(t, in, next), next+" stays the first server")
	nodes := clusterNodes(t, in, next)
	assert.Len(t, nodes, len(w.views.All.Spec.Hosts))
	for name, n := range nodes {
		assert.True(t, n.Ready, "%s Ready", name)
	}
	again := runWhole(t, w, pkg.Path, w.allPath, false)
	assert.Empty(t, again.Changes(), "an apply after the controller came back changes nothing")
	assert.Zero(t, again.BytesUploaded(), "an apply after the controller came back uploads nothing")
}
