// Package hostfile reads and writes whole files on a host through a
// host.Runner alone, as root: reads are exact (base64, so no transport
// trims a byte), writes are atomic and keep SELinux labels right.
//
// It exists so the preparation steps and firewall front ends do not each
// carry their own; when pkg/host grows its own file helpers, this package
// should delegate to them.
package hostfile

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// readScript prints "absent", or "present" and the file base64-encoded.
const readScript = `if [ -f "$1" ]; then echo present; base64 < "$1"
elif [ -e "$1" ]; then echo "$1 is not a regular file" >&2; exit 1
else echo absent; fi`

// Read returns the content of path; exists is false when there is no file.
func Read(ctx context.Context, r host.Runner, path string) (data []byte, exists bool, err error) {
	out, err := r.Sudo(ctx, shell.Join("sh", "-c", readScript, "sh", path))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	state, body, _ := strings.Cut(strings.TrimLeft(out, "\r\n"), "\n")
	switch strings.TrimSpace(state) {
	case "absent":
		return nil, false, nil
	case "present":
		data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(body), ""))
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", path, err)
		}
		return data, true, nil
	}
	return nil, false, fmt.Errorf("reading %s: unexpected output %q", path, state)
}

// writeScript writes stdin to a temporary file in the target's directory
// and renames it into place. The temporary file is created there, not in
// /tmp, because a moved file keeps its SELinux label (hosts.md §4.4);
// restorecon fixes what is left. A bind-mounted file (/etc/hosts in a
// container) cannot be renamed onto: with $3=inplace it is rewritten in
// place instead.
const writeScript = `set -e
p=$1; d=$(dirname "$p")
if [ -d "$p" ]; then echo "$p is a directory" >&2; exit 1; fi
mkdir -p "$d"
t=$(mktemp "$d/.cargoship.XXXXXX")
trap 'rm -f "$t"' EXIT
cat > "$t"
chmod "$2" "$t"
if ! err=$(mv -f "$t" "$p" 2>&1); then
  if [ "$3" != inplace ]; then echo "$err" >&2; exit 1; fi
  cat "$t" > "$p"
fi
if command -v restorecon >/dev/null 2>&1; then restorecon "$p" >/dev/null 2>&1 || true; fi`

// Option adjusts Write.
type Option func(*options)

type options struct{ inPlace bool }

// InPlaceFallback rewrites the file in place when renaming onto it fails,
// as it does for a bind-mounted /etc/hosts (hosts.md §4.4).
func InPlaceFallback() Option { return func(o *options) { o.inPlace = true } }

// Write replaces path with data, mode as octal permission bits.
func Write(ctx context.Context, r host.Runner, path string, data []byte, mode uint32, opts ...Option) error {
	var o options
	for _, f := range opts {
		f(&o)
	}
	flag := "rename"
	if o.inPlace {
		flag = "inplace"
	}
	cmd := shell.Join("sh", "-c", writeScript, "sh", path, fmt.Sprintf("%04o", mode), flag)
	if _, err := r.Sudo(ctx, cmd, host.WithStdin(bytes.NewReader(data))); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Remove deletes path; a missing file is not an error.
func Remove(ctx context.Context, r host.Runner, path string) error {
	if _, err := r.Sudo(ctx, shell.Join("rm", "-f", "--", path)); err != nil {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}

// Sync makes path hold data: it reads first and writes only on a
// difference, so a second run reports changed=false.
func Sync(ctx context.Context, r host.Runner, path string, data []byte, mode uint32, opts ...Option) (changed bool, err error) {
	old, exists, err := Read(ctx, r, path)
	if err != nil {
		return false, err
	}
	if exists && bytes.Equal(old, data) {
		return false, nil
	}
	return true, Write(ctx, r, path, data, mode, opts...)
}
