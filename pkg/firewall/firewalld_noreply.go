package firewall

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// firewall-cmd waits D-Bus's default 25 seconds for firewalld's reply and
// then exits 254 with NoReply, while firewalld goes on and finishes the
// call: a reload on a slow or loaded host is the usual one
// (docs/reference/hosts.md §5.1). Such a failure says nothing of what the
// daemon did, so cargoship waits for firewalld to answer again, reads the
// configuration again and runs only what is still to do.
const noReplyText = "Did not receive a reply"

// DefaultReplyWait bounds the wait for firewalld to answer again after a
// reply was lost.
const DefaultReplyWait = 5 * time.Minute

// lostRepliesAllowed is how many lost replies one change survives: each
// is followed by a fresh read, so a daemon that keeps losing them is a
// host to look at, not one to keep retrying.
const lostRepliesAllowed = 3

// firewalldAnswers waits until firewall-cmd --state answers, for at most
// $1 seconds: a call queued behind a long one is answered when that one
// ends.
const firewalldAnswers = `end=$(( $(date +%s) + $1 ))
until firewall-cmd --state >/dev/null 2>&1; do
  [ "$(date +%s)" -lt "$end" ] || exit 1
  sleep 2
done`

func lostReply(err error) bool { return err != nil && strings.Contains(err.Error(), noReplyText) }

func (f Firewalld) replyWait() time.Duration { return cmp.Or(f.ReplyWait, DefaultReplyWait) }

// converge runs p's commands. When firewall-cmd loses a reply it waits for
// firewalld, asks replan what is still to do and runs that, and says so in
// p's warnings, which the run logs with the host and the phase.
func (f Firewalld) converge(ctx context.Context, r host.Runner, p *Plan, replan func() (Plan, error)) error {
	cmds := firewalldArgvs(*p)
	for lost := 0; ; lost++ {
		err := runToolCalls(ctx, r, cmds, f.viaFirewallCmd)
		if !lostReply(err) || lost == lostRepliesAllowed {
			return err
		}
		p.warnf("firewalld did not answer in time (a lost D-Bus reply): cargoship waited for it, up to %s, then read its configuration again", f.replyWait())
		secs := strconv.Itoa(int(f.replyWait().Seconds()))
		if _, werr := r.Sudo(ctx, host.Script(firewalldAnswers, secs)); werr != nil {
			return fmt.Errorf("%w; then firewalld did not answer firewall-cmd --state for %s", err, f.replyWait())
		}
		next, rerr := replan()
		if rerr != nil {
			return fmt.Errorf("reading firewalld again after a lost reply: %w", rerr)
		}
		if cmds = firewalldArgvs(next); len(cmds) == 0 {
			return nil
		}
	}
}

// batchable are the options firewall-cmd takes more than once in one
// call. Only --permanent calls are joined: there each value edits a
// settings object and one D-Bus update carries them all, so a bad value
// fails the call; at runtime firewall-cmd turns a failing value of several
// into a warning and exits 0 (command.py __cmd_sequence).
var batchable = []string{
	"--add-entry", "--remove-entry", "--add-source", "--remove-source",
	"--add-port", "--remove-port", "--add-service", "--remove-service",
	"--add-rich-rule", "--remove-rich-rule",
}

// addFW plans one firewall-cmd call.
func (p *Plan) addFW(summary string, args ...string) {
	p.addArgv(summary, append([]string{"firewall-cmd"}, args...)...)
}

// firewalldArgvs is p's firewall-cmd calls with neighbouring --permanent
// calls that differ only in the value of one repeatable option joined
// into one call: each is a settings update and a D-Bus round trip, and a
// hundred peers would otherwise be a hundred of them.
func firewalldArgvs(p Plan) [][]string {
	var argvs [][]string
	growing := false // the last argv can take another value
	for _, a := range p.Actions {
		switch {
		case a.Command == "":
			continue
		case growing && joinable(argvs[len(argvs)-1], a.argv):
			argvs[len(argvs)-1] = append(argvs[len(argvs)-1], a.argv[len(a.argv)-1])
			continue
		}
		argvs = append(argvs, slices.Clone(a.argv))
		growing = isBatchable(a.argv)
	}
	return argvs
}

func isBatchable(argv []string) bool {
	if len(argv) < 3 || argv[1] != "--permanent" {
		return false
	}
	opt, _, _ := strings.Cut(argv[len(argv)-1], "=")
	return slices.Contains(batchable, opt)
}

// joinable reports whether next repeats grown's call with another value
// of the same option: grown is a batchable argv already holding one or
// more values of its last option.
func joinable(grown, next []string) bool {
	if !isBatchable(next) {
		return false
	}
	opt, _, _ := strings.Cut(next[len(next)-1], "=")
	prefix := next[:len(next)-1]
	if len(grown) <= len(prefix) {
		return false
	}
	for i, a := range prefix {
		if grown[i] != a {
			return false
		}
	}
	for _, v := range grown[len(prefix):] {
		if o, _, _ := strings.Cut(v, "="); o != opt {
			return false
		}
	}
	return true
}
