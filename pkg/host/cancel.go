package host

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stopping a cancelled command. Closing the session is not enough: sshd
// leaves a command without a terminal running, the ssh binary cannot
// signal it at all, and sudo passes a signal on to its child only, not to
// that child's children (and a root child is beyond the login user's
// kill). So every command line starts by printing its shell's pid, which
// is its process group (sshd and the local runner start each command in
// a new one), and a cancelled command's group is killed over a fresh
// session, through sudo when it ran as root.

// pgidMark starts the line each command writes first on stderr.
const pgidMark = "cargoship-pgid:"

// markPGID prefixes line with the pid report.
func markPGID(line string) string { return "echo " + pgidMark + "$$ >&2; " + line }

// killGroup sends TERM to a process group, then KILL to what is left after
// a grace period. The kill -SIG -PGID form is the one dash, bash and
// busybox ash all take.
func (c *Conn) killGroup(ctx context.Context, pgid int, asRoot bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*killGrace)
	defer cancel()
	if _, err := c.exec(ctx, killLine(pgid, killGrace, killPoll), asRoot, RunOptions{noKill: true}); err != nil {
		c.log.Warn("could not stop a cancelled command", "host", c.name, "pgid", pgid, "error", err)
	}
}

// killPoll is how often killGroup looks whether the group is gone. A
// variable so that the tests, which cancel dozens of commands, each gone
// at once, need not wait a second for each.
var killPoll = time.Second

// killLine is killGroup's command: TERM, a look every poll for grace,
// then KILL.
func killLine(pgid int, grace, poll time.Duration) string {
	g := "-" + strconv.Itoa(pgid)
	looks := make([]string, max(1, int(grace/poll)))
	for i := range looks {
		looks[i] = strconv.Itoa(i + 1)
	}
	return "kill -TERM " + g + " 2>/dev/null || exit 0; for i in " + strings.Join(looks, " ") + "; do sleep " +
		strconv.FormatFloat(poll.Seconds(), 'f', -1, 64) + "; kill -0 " + g +
		" 2>/dev/null || exit 0; done; kill -KILL " + g + " 2>/dev/null; exit 0"
}

// pgidSniffer takes the pid line out of stderr and passes the rest on.
type pgidSniffer struct {
	w    io.Writer
	mu   sync.Mutex
	buf  []byte
	id   int
	done bool
}

func (p *pgidSniffer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.w.Write(b)
	}
	n := len(b)
	p.buf = append(p.buf, b...)
	for !p.done {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			if len(p.buf) > 4096 { // not our line: stop looking
				p.done = true
				_, err := p.w.Write(p.buf)
				p.buf = nil
				return n, err
			}
			return n, nil
		}
		line := p.buf[:i+1]
		if v, found := bytes.CutPrefix(line, []byte(pgidMark)); found {
			p.id, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			p.done = true
		} else if _, err := p.w.Write(line); err != nil {
			return n, err
		}
		p.buf = p.buf[i+1:]
	}
	_, err := p.w.Write(p.buf)
	p.buf = nil
	return n, err
}

// flush passes on what is left when the command ended without the line.
func (p *pgidSniffer) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		_, _ = p.w.Write(p.buf)
		p.buf = nil
	}
}

func (p *pgidSniffer) pgid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id
}
