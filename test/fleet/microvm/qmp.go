package microvm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// qmp is a connection to a guest's QEMU Machine Protocol socket: how the
// backend pauses, resets and powers off a guest without its cooperation
// (the way a pulled cord or a reset button would; docs/reference/microvm.md §4).
type qmp struct {
	conn net.Conn
	r    *bufio.Reader
}

// qmpMessage is any line qemu writes: the greeting, a reply or an event.
type qmpMessage struct {
	QMP    json.RawMessage `json:"QMP"`
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	Event string `json:"event"`
}

// dialQMP connects to socket, reads the greeting and leaves capabilities
// negotiation mode, after which qemu accepts commands.
func dialQMP(ctx context.Context, socket string) (*qmp, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("qmp %s: %w", socket, err)
	}
	q := &qmp{conn: c, r: bufio.NewReader(c)}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	} else {
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	}
	m, err := q.read()
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("qmp %s: no greeting: %w", socket, err)
	}
	if m.QMP == nil {
		_ = c.Close()
		return nil, fmt.Errorf("qmp %s: the first line is not qemu's greeting", socket)
	}
	if _, err := q.execute("qmp_capabilities"); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("qmp %s: %w", socket, err)
	}
	return q, nil
}

func (q *qmp) read() (qmpMessage, error) {
	line, err := q.r.ReadBytes('\n')
	if err != nil {
		return qmpMessage{}, err
	}
	var m qmpMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return qmpMessage{}, fmt.Errorf("qmp: %q: %w", line, err)
	}
	return m, nil
}

// execute runs one command and returns its reply, skipping the events
// qemu interleaves (STOP, RESUME, RESET, SHUTDOWN).
func (q *qmp) execute(command string) (json.RawMessage, error) {
	b, _ := json.Marshal(map[string]string{"execute": command})
	if _, err := q.conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	for {
		m, err := q.read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", command, err)
		}
		switch {
		case m.Error != nil:
			return nil, fmt.Errorf("%s: %s: %s", command, m.Error.Class, m.Error.Desc)
		case m.Return != nil:
			return m.Return, nil
		}
	}
}

// status is query-status's "status": running, paused, shutdown, ...
func (q *qmp) status() (string, error) {
	r, err := q.execute("query-status")
	if err != nil {
		return "", err
	}
	var s struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(r, &s); err != nil {
		return "", fmt.Errorf("query-status: %q: %w", r, err)
	}
	return s.Status, nil
}

// pause freezes the guest's CPUs: it goes silent, its memory kept.
func (q *qmp) pause() error { _, err := q.execute("stop"); return err }

// resume runs the CPUs again after pause.
func (q *qmp) resume() error { _, err := q.execute("cont"); return err }

// reset is the reset button: the guest reboots without shutting down.
func (q *qmp) reset() error { _, err := q.execute("system_reset"); return err }

// quit ends the qemu process at once: the pulled cord.
func (q *qmp) quit() error {
	_, err := q.execute("quit")
	return err
}

func (q *qmp) close() error { return q.conn.Close() }
