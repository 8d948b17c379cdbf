package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// HostileSender is a test double of a compromised relay sender: a real
// host, reached through Runner, whose root does with the relay key what
// such a root can. When host.Relay hands it the key, it first opens a
// connection of its own to the receiver with it, kept open (an ssh
// ControlMaster) past the revoke, and on it a session whose forced command
// holds the receiver's part file open; Delay later that session writes
// Payload into it, over and over for a few seconds. Then it sends the
// file as an honest sender would. Late opens one more session on the
// kept connection, after the transfer, as a sender would to write again.
type HostileSender struct {
	host.Runner
	Payload string
	Delay   time.Duration
	// Dir is where it keeps the key and the connection's socket on the
	// sender; Close removes it.
	Dir string

	peer []string // port, user, address of the last relay
}

// hostileStart reads the key as the relay's send script does, opens the
// kept connection and the session that writes later, and returns.
const hostileStart = `set -e
port=$1 user=$2 addr=$3 d=$4 payload=$5 delay=$6
umask 077
rm -rf -- "$d"; mkdir -- "$d"
IFS= read -r key
printf '%s\n' "$key" | base64 -d > "$d/id"
cat > /dev/null
set -- -F /dev/null -i "$d/id" -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=no \
	-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ControlPath="$d/cm" -p "$port" -l "$user"
ssh "$@" -o ControlMaster=yes -o ControlPersist=300 -N -f -- "$addr" </dev/null >/dev/null 2>&1
(sleep "$delay"; i=0; while [ "$i" -lt 50 ]; do printf '%s' "$payload"; sleep 0.1; i=$((i+1)); done) 2>/dev/null |
	ssh "$@" -T -- "$addr" >"$d/first.out" 2>&1 &
sleep 1`

// hostileLate opens a new session on the kept connection and prints its
// exit status.
const hostileLate = `d=$1 addr=$2
printf LATE | ssh -F /dev/null -o ControlPath="$d/cm" -o ControlMaster=no -o BatchMode=yes -T -- "$addr" 2>&1
echo "rc=$?"`

// hostileStop ends the kept connection and every ssh that used the key.
const hostileStop = `d=$1 addr=$2
[ -d "$d" ] || exit 0
ssh -F /dev/null -o ControlPath="$d/cm" -O exit -- "$addr" >/dev/null 2>&1 || true
pkill -f -- "$d/id" 2>/dev/null || true
rm -rf -- "$d"`

// Sudo runs cmd, and when cmd is a relay's send it first does what
// HostileSender says.
func (h *HostileSender) Sudo(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	body, args, ok := Call{Cmd: cmd}.Script()
	if !ok || !strings.Contains(body, "cargoship-relay.XXXXXX") || len(args) != 4 {
		return h.Runner.Sudo(ctx, cmd, opts...)
	}
	o := host.Apply(opts)
	if o.Stdin == nil {
		return "", fmt.Errorf("%s: a relay send without its key on stdin", h)
	}
	stdin, err := io.ReadAll(o.Stdin)
	if err != nil {
		return "", err
	}
	h.peer = args[1:]
	start := host.Script(hostileStart, args[1], args[2], args[3], h.Dir, h.Payload, strconv.FormatFloat(h.Delay.Seconds(), 'f', 1, 64))
	if out, err := h.Runner.Sudo(ctx, start, host.WithStdin(bytes.NewReader(stdin)), host.WithRedact(o.Redact...)); err != nil {
		return out, fmt.Errorf("%s: the hostile sender's own session: %w", h, err)
	}
	return h.Runner.Sudo(ctx, cmd, append(opts, host.WithStdin(bytes.NewReader(stdin)))...)
}

// Late opens a session on the connection kept from the last relay and
// returns what it printed and its exit status ("rc=N").
func (h *HostileSender) Late(ctx context.Context) (string, error) {
	if h.peer == nil {
		return "", fmt.Errorf("%s: no relay was sent", h)
	}
	return h.Runner.Sudo(ctx, host.Script(hostileLate, h.Dir, h.peer[2]))
}

// Close ends the kept connection and removes the key.
func (h *HostileSender) Close(ctx context.Context) error {
	if h.peer == nil {
		return nil
	}
	_, err := h.Runner.Sudo(ctx, host.Script(hostileStop, h.Dir, h.peer[2]))
	return err
}
