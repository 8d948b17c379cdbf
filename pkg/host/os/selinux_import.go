package hostos

import (
	"context"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Every semanage or setsebool -P commits a transaction, and each commit
// rebuilds the whole policy: tens of seconds on a real host, minutes on a
// small or emulated one. semanage import runs many commands in one
// transaction and commits once (docs/reference/hosts.md §6.1), so the
// booleans and file contexts go in together when semanage is there.
const semanageImport = `printf '%s\n' "$@" | semanage import`

// importLines are the booleans and file contexts as semanage import lines,
// ok=false when a value would not survive its parser: it splits lines at
// whitespace and strips quotes from words, and validate already refuses
// whitespace.
func (p selinuxPlan) importLines() ([]string, bool) {
	var lines []string
	for _, b := range p.booleans {
		name, bit, _ := strings.Cut(b, "=")
		state := "--off"
		if bit == "1" {
			state = "--on"
		}
		lines = append(lines, "boolean -m "+state+" "+name)
	}
	for _, op := range p.contexts {
		if strings.ContainsAny(op.fc.Path, `"'`) {
			return nil, false
		}
		lines = append(lines, fmt.Sprintf("fcontext %s -t %s %s", op.flag, op.fc.Type, op.fc.Path))
	}
	return lines, true
}

// applyLocal sets the booleans and file contexts: in one semanage import
// when there are file contexts (semanage is then known to be there), else
// with setsebool -P, which every SELinux host has.
func (p selinuxPlan) applyLocal(ctx context.Context, r host.Runner) error {
	if lines, ok := p.importLines(); ok && len(p.contexts) > 0 {
		if _, err := r.Sudo(ctx, host.Script(semanageImport, lines...)); err != nil {
			return fmt.Errorf("semanage import (%s): %w", strings.Join(lines, "; "), err)
		}
		return nil
	}
	if len(p.booleans) > 0 {
		if _, err := r.Sudo(ctx, shell.Join(append([]string{"setsebool", "-P"}, p.booleans...)...)); err != nil {
			return fmt.Errorf("setting SELinux booleans: %w", err)
		}
	}
	for _, op := range p.contexts {
		if _, err := r.Sudo(ctx, shell.Join("semanage", "fcontext", op.flag, "-t", op.fc.Type, op.fc.Path)); err != nil {
			return fmt.Errorf("semanage fcontext %s %s: %w", op.flag, op.fc.Path, err)
		}
	}
	return nil
}
