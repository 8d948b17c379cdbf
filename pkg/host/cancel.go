package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Stopping a cancelled command. Closing the session is not enough: sshd
// leaves a command without a terminal running, the ssh binary cannot
// signal it at all, and sudo passes a signal on to its child only, not to
// that child's children (and a root child is beyond the login user's
// kill). So every command line starts by printing its shell's pid, which
// is its process group (sshd and the local runner start each command in
// a new one), and a cancelled command's group is killed over a fresh
// session, through sudo when it ran as root.
//
// That kill runs as root, so what names the group must not be anyone's
// output but the wrapper's: a login shell's profile or the command may
// print anything on the same stderr. The mark carries a nonce drawn for
// each command, only the first line bearing it counts, and the kill script
// checks on the host that the group is still one in the command's session.

// pgidMark starts the line each command writes first on stderr; the
// command's nonce and its shell's pid follow.
const pgidMark = "cargoship-pgid:"

// killGroup sends TERM to a process group, then KILL to what is left after
// a grace period, as long as the group is still in the session a command
// of this connection runs in.
func (c *Conn) killGroup(ctx context.Context, pgid int, asRoot bool) {
	sid, ok := c.commandSession(pgid)
	if !ok {
		c.log.Warn("not stopping a cancelled command: its process group is not one of a command", "host", c.name, "pgid", pgid)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*killGrace)
	defer cancel()
	if _, err := c.exec(ctx, killLine(pgid, sid, killGrace, killPoll), asRoot, RunOptions{noKill: true}); err != nil {
		c.log.Warn("could not stop a cancelled command", "host", c.name, "pgid", pgid, "error", err)
	}
}

// commandSession is the session a command whose shell leads group pgid
// runs in. sshd makes each command's shell a session leader, so there it
// is pgid itself. The local runner only gives the shell a group of its
// own, in cargoship's session, which is never cargoship's own group.
func (c *Conn) commandSession(pgid int) (int, bool) {
	if pgid <= 1 { // -1 is every process, 0 and 1 are no command's
		return 0, false
	}
	if _, local := c.t.(localTransport); !local {
		return pgid, true
	}
	sid, err := unix.Getsid(0)
	if err != nil || pgid == unix.Getpgrp() {
		return 0, false
	}
	return sid, true
}

// killPoll is how often killGroup looks whether the group is gone. A
// variable so that the tests, which cancel dozens of commands, each gone
// at once, need not wait a second for each.
var killPoll = time.Second

// killScript is killGroup's command: TERM, a look every poll ($4) for
// $3 polls, then KILL, each only while group $1 has a live process (not
// a zombie waiting for its parent) and that process is in session $2. A
// group's processes all share its session, so the first one found
// answers for all; a group that is gone, or whose number a process of
// another session took since, is left alone. /proc/PID/stat's fields
// after the command name, which may hold spaces, start with the state;
// the group and session are the third and fourth. The kill -SIG -PGID
// form is the one dash, bash and busybox ash all take.
const killScript = `g=$1 s=$2 n=$3 t=$4
case $g in ''|*[!0-9]*|0|1) exit 0 ;; esac
own() {
	for f in /proc/[0-9]*/stat; do
		{ read -r l < "$f"; } 2>/dev/null || continue
		set -- ${l##*") "}
		[ "$3" = "$g" ] && [ "$1" != Z ] || continue
		[ "$4" = "$s" ]
		return
	done
	return 1
}
own || exit 0
kill -TERM -"$g" 2>/dev/null || exit 0
i=0
while [ "$i" -lt "$n" ]; do
	sleep "$t"
	own || exit 0
	i=$((i + 1))
done
kill -KILL -"$g" 2>/dev/null
exit 0`

// killLine runs killScript for group pgid of session sid.
func killLine(pgid, sid int, grace, poll time.Duration) string {
	return Script(killScript, strconv.Itoa(pgid), strconv.Itoa(sid), strconv.Itoa(max(1, int(grace/poll))),
		strconv.FormatFloat(poll.Seconds(), 'f', -1, 64))
}

// pgidSniffer takes the pid line out of stderr and passes the rest on.
type pgidSniffer struct {
	w    io.Writer
	mark []byte // pgidMark, this command's nonce, ':'
	mu   sync.Mutex
	buf  []byte
	id   int
	done bool
}

// newPGIDSniffer draws the nonce of one command.
func newPGIDSniffer(w io.Writer) *pgidSniffer {
	return &pgidSniffer{w: w, mark: []byte(pgidMark + rand.Text() + ":")}
}

// wrap prefixes line with the pid report.
func (p *pgidSniffer) wrap(line string) string {
	return "echo " + shell.Quote(string(p.mark)) + "$$ >&2; " + line
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
		if v, ours := bytes.CutPrefix(line[:i], p.mark); ours {
			// the first line with the nonce is the wrapper's: what follows
			// is the command's, whatever it prints
			p.id, p.done = parsePGID(v), true
		} else if _, err := p.w.Write(line); err != nil {
			return n, err
		}
		p.buf = p.buf[i+1:]
	}
	_, err := p.w.Write(p.buf)
	p.buf = nil
	return n, err
}

// parsePGID reads the pid the mark ends with: decimal digits only, no
// leading zero, above 1 (kill -TERM -1 is every process there is) and
// within a pid's range. Anything else is 0: no kill.
func parsePGID(v []byte) int {
	if len(v) == 0 || len(v) > 10 || v[0] == '0' {
		return 0
	}
	for _, d := range v {
		if d < '0' || d > '9' {
			return 0
		}
	}
	id, err := strconv.ParseInt(string(v), 10, 32)
	if err != nil || id <= 1 {
		return 0
	}
	return int(id)
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
