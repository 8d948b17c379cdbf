package firewall

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// callsOf counts the firewall-cmd calls holding op.
func callsOf(calls [][]string, op string) int {
	n := 0
	for _, c := range calls {
		if c[0] == "firewall-cmd" && strings.Contains(strings.Join(c, " "), op) {
			n++
		}
	}
	return n
}

// converged checks that firewalld holds the cluster permanently and at
// runtime and that another Apply has nothing to do.
func converged(t *testing.T, h *fakeHost, fw Firewalld) {
	t.Helper()
	f := h.load(t).Firewalld
	if confString(f.Perm) != confString(f.Run) {
		t.Errorf("runtime differs from permanent:\n%s\n%s", confString(f.Run), confString(f.Perm))
	}
	if got := f.Run.IPSets[IPSetNodes]; got == nil || strings.Join(got.Entries, " ") != "10.73.0.11 10.73.0.12" {
		t.Errorf("runtime k8s-nodes = %+v", got)
	}
	if again, err := fw.Plan(context.Background(), h, cluster); err != nil || again.Changed() {
		t.Errorf("plan after apply = %+v %v", again, err)
	}
}

// TestFirewalldLostReloadReplyIsNotAFailure: firewall-cmd --reload gives up
// after D-Bus's 25 seconds while firewalld finishes the reload. Apply waits
// for firewalld, reads again, finds nothing left and does not reload twice.
func TestFirewalldLostReloadReplyIsNotAFailure(t *testing.T) {
	t.Parallel()
	fake := newFakeFirewalld()
	fake.LoseReplies = map[string]int{"--reload": 1}
	h := newFakeHost(t, &fakeState{Firewalld: fake})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}
	p, err := fw.Apply(context.Background(), h, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "lost D-Bus reply") }) {
		t.Errorf("the run is not told of the lost reply: warnings %q", p.Warnings)
	}
	calls := h.load(t).Calls
	if n := callsOf(calls, "--reload"); n != 1 {
		t.Errorf("%d reloads, want 1: the lost reply's reload was done", n)
	}
	if n := callsOf(calls, "--state"); n < 1 {
		t.Error("Apply did not wait for firewalld to answer")
	}
	converged(t, h, fw)
}

// TestFirewalldLostReplyRunsOnlyWhatIsLeft: a lost reply half-way through
// the changes (the ipset was created) is followed by the rest, with no
// second --new-ipset (NAME_CONFLICT) and one reload; a daemon still busy
// for a while is waited for.
func TestFirewalldLostReplyRunsOnlyWhatIsLeft(t *testing.T) {
	t.Parallel()
	fake := newFakeFirewalld()
	fake.LoseReplies = map[string]int{"--new-ipset": 1}
	fake.BusyAfterLoss = 1 // the first --state after it is not answered either
	h := newFakeHost(t, &fakeState{Firewalld: fake})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}
	if _, err := fw.Apply(context.Background(), h, cluster); err != nil {
		t.Fatal(err)
	}
	calls := h.load(t).Calls
	if n := callsOf(calls, "--new-ipset="+IPSetNodes+" "); n != 1 {
		t.Errorf("--new-ipset=%s ran %d times, want 1", IPSetNodes, n)
	}
	if n := callsOf(calls, "--reload"); n != 1 {
		t.Errorf("%d reloads, want 1", n)
	}
	converged(t, h, fw)
}

// TestFirewalldThatNeverAnswersAgainFails: after a lost reply firewalld is
// given ReplyWait to answer; past it Apply fails, saying so, with the
// lost reply's own message.
func TestFirewalldThatNeverAnswersAgainFails(t *testing.T) {
	t.Parallel()
	fake := newFakeFirewalld()
	fake.LoseReplies = map[string]int{"--reload": 1}
	fake.BusyAfterLoss = 1000
	h := newFakeHost(t, &fakeState{Firewalld: fake})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich"), ReplyWait: 3 * time.Second}
	_, err := fw.Apply(context.Background(), h, cluster)
	if err == nil {
		t.Fatal("Apply succeeded with a firewalld that never answered")
	}
	for _, want := range []string{noReplyText, "did not answer firewall-cmd --state for 3s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestFirewalldRemoveSurvivesALostReply: Remove's reload loses its reply;
// Remove still ends with cargoship's configuration gone at runtime.
func TestFirewalldRemoveSurvivesALostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	before := adminFirewalld()
	h := newFakeHost(t, &fakeState{Firewalld: adminFirewalld()})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich"), ConfigDir: t.TempDir(), DefaultsDir: t.TempDir()}
	if _, err := fw.Apply(ctx, h, cluster); err != nil {
		t.Fatal(err)
	}
	st := h.load(t)
	st.Firewalld.LoseReplies = map[string]int{"--reload": 1}
	h.save(t, st)
	if _, err := fw.Remove(ctx, h); err != nil {
		t.Fatal(err)
	}
	got := h.load(t).Firewalld
	if confString(got.Run) != confString(before.Run) {
		t.Errorf("runtime after Remove:\n%s\nbefore cargoship:\n%s", confString(got.Run), confString(before.Run))
	}
	if again, err := fw.PlanRemove(ctx, h); err != nil || again.Changed() {
		t.Errorf("plan after Remove = %+v %v", again, err)
	}
}

// TestFirewalldJoinsPermanentCalls: the values of one option in
// neighbouring --permanent calls go in one call (a hundred peers are one
// firewall-cmd, not a hundred), every ipset's trust in one; the plan
// still names each change.
func TestFirewalldJoinsPermanentCalls(t *testing.T) {
	t.Parallel()
	h := newFakeHost(t, &fakeState{Firewalld: newFakeFirewalld()})
	fw := Firewalld{StatePath: filepath.Join(t.TempDir(), "rich")}
	p, err := fw.Apply(context.Background(), h, cluster)
	if err != nil {
		t.Fatal(err)
	}
	calls := h.load(t).Calls
	for op, want := range map[string]int{
		"--ipset=" + IPSetNodes + " --add-entry":        1,
		"--ipset=" + IPSetSubnets + " --add-entry":      1,
		"--zone=" + TrustedZone + " --add-source":       1,
		"--service=" + FirewalldServ + " --add-port":    1,
		"--zone=public --add-rich-rule":                 1,
		"--add-entry=10.73.0.11 --add-entry=10.73.0.12": 1,
	} {
		if n := callsOf(calls, op); n != want {
			t.Errorf("%d calls with %q, want %d", n, op, want)
		}
	}
	var summaries []string
	for _, a := range p.Actions {
		summaries = append(summaries, a.Summary)
	}
	for _, want := range []string{"add 10.73.0.11 to ipset k8s-nodes", "add 10.73.0.12 to ipset k8s-nodes", "trust ipset k8s-subnets in zone trusted"} {
		if !slices.Contains(summaries, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	converged(t, h, fw)
}

func TestFirewalldCommandsJoinOnlyNeighboursOfOneOption(t *testing.T) {
	t.Parallel()
	var p Plan
	p.addFW("a", "--permanent", "--ipset=s", "--add-entry=1")
	p.addFW("b", "--permanent", "--ipset=s", "--add-entry=2")
	p.addFW("c", "--permanent", "--ipset=s", "--remove-entry=3")
	p.addFW("d", "--permanent", "--ipset=t", "--remove-entry=4")
	p.add("record", "")
	p.addFW("e", "--permanent", "--ipset=t", "--remove-entry=5")
	p.addFW("f", "--zone=public", "--add-port=1/tcp")
	p.addFW("g", "--zone=public", "--add-port=2/tcp")
	p.addFW("h", "--permanent", "--new-ipset=u", "--type=hash:ip")
	p.addFW("i", "--permanent", "--new-ipset=v", "--type=hash:ip")
	p.addFW("j", "--reload")
	want := []string{
		"firewall-cmd --permanent --ipset=s --add-entry=1 --add-entry=2",
		"firewall-cmd --permanent --ipset=s --remove-entry=3",
		"firewall-cmd --permanent --ipset=t --remove-entry=4 --remove-entry=5",
		"firewall-cmd --zone=public --add-port=1/tcp",
		"firewall-cmd --zone=public --add-port=2/tcp",
		"firewall-cmd --permanent --new-ipset=u --type=hash:ip",
		"firewall-cmd --permanent --new-ipset=v --type=hash:ip",
		"firewall-cmd --reload",
	}
	var got []string
	for _, argv := range firewalldArgvs(p) {
		got = append(got, shell.Join(argv...))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
