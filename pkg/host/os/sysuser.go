package hostos

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// SystemUser makes a system user and its group of the same name exist,
// with no home directory and no login shell, as rke2's CIS profile needs
// for etcd: rke2-server exits at start when profile is cis and no etcd
// user and group exist (docs/reference/engines.md 11). An existing user
// or group is left as it is, whatever its id.
type SystemUser struct {
	Name    string
	Comment string
}

var sysUserName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// sysUserProbe prints user=yes|no and group=yes|no.
const sysUserProbe = `if getent passwd "$1" >/dev/null 2>&1; then echo user=yes; else echo user=no; fi
if getent group "$1" >/dev/null 2>&1; then echo group=yes; else echo group=no; fi`

// sysUserCreate creates what is missing: the group first, then the user
// in it, with the nologin shell the host has.
const sysUserCreate = `set -e
getent group "$1" >/dev/null 2>&1 || groupadd -r "$1"
if ! getent passwd "$1" >/dev/null 2>&1; then
  shell=/sbin/nologin
  for s in /usr/sbin/nologin /sbin/nologin /usr/bin/nologin; do if [ -x "$s" ]; then shell=$s; break; fi; done
  useradd -r -M -g "$1" -s "$shell" -c "$2" "$1"
fi`

func (u SystemUser) plan(ctx context.Context, r host.Runner) (Change, error) {
	var c Change
	if !sysUserName.MatchString(u.Name) || strings.ContainsAny(u.Comment, ":\n") {
		return c, fmt.Errorf("%q is not a system user name (or its comment holds ':' or a line break)", u.Name)
	}
	out, err := r.Sudo(ctx, host.Script(sysUserProbe, u.Name))
	if err != nil {
		return c, fmt.Errorf("looking up user %s: %w", u.Name, err)
	}
	if strings.Contains(out, "group=no") {
		c.actionf("create system group %s", u.Name)
	}
	if strings.Contains(out, "user=no") {
		c.actionf("create system user %s (no home, no login shell)", u.Name)
	}
	return c, nil
}

// Plan implements Step.
func (u SystemUser) Plan(ctx context.Context, r host.Runner) (Change, error) {
	return u.plan(ctx, r)
}

// Apply implements Step.
func (u SystemUser) Apply(ctx context.Context, r host.Runner) (Change, error) {
	c, err := u.plan(ctx, r)
	if err != nil || !c.Changed() {
		return c, err
	}
	if _, err := r.Sudo(ctx, host.Script(sysUserCreate, u.Name, u.Comment)); err != nil {
		return Change{}, fmt.Errorf("creating system user %s: %w", u.Name, err)
	}
	after, err := u.plan(ctx, r)
	if err != nil {
		return Change{}, err
	}
	if after.Changed() {
		return Change{}, fmt.Errorf("created system user %s, but the host still lacks it: %s", u.Name, strings.Join(after.Actions, "; "))
	}
	return c, nil
}
