package firewall

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// firewallCmdBatch runs firewall-cmd's own program once per argument list
// in one Python process: the same code, the same warnings, errors and exit
// codes as separate runs, but the imports (gi, dbus, firewalld's client),
// which are most of a firewall-cmd run's CPU, are paid once. A change of a
// dozen calls cost a dozen Python starts, about 40 seconds on an emulated
// host. It stops at the first call that fails, with that call's exit code,
// as `set -e` over separate runs does. argv[1] is firewall-cmd's path,
// argv[2] the argument lists as JSON. It is given to `python -c`: see
// firewalldDBusProgram for why not as a file. It must run on Python 3.6.
const firewallCmdBatch = `import json, runpy, sys
path, calls = sys.argv[1], json.loads(sys.argv[2])
for args in calls:
    sys.argv = [path] + args
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code
    sys.stdout.flush()
    sys.stderr.flush()
    if code is None or code == 0:
        continue
    if not isinstance(code, int):
        sys.stderr.write("%s\n" % code)
        code = 1
    sys.exit(code)`

// firewalldBatchScript runs $2 (JSON argument lists) through
// firewallCmdBatch ($1) under the interpreter on firewall-cmd's first
// line, or, when that is not a Python one, runs the command lines after it
// one by one.
const firewalldBatchScript = `set -e
fwcmd=$(command -v firewall-cmd) || fwcmd=
fwpy=
[ -z "$fwcmd" ] || { IFS= read -r fwpy < "$fwcmd"; } 2>/dev/null || fwpy=
case $fwpy in "#!/"*python*) exec ${fwpy#"#!"} -c "$1" "$fwcmd" "$2" ;; esac
`

// runFirewallCmds runs firewall-cmd once per argument list (each without
// the leading "firewall-cmd"), in one Python process where it can.
func (f Firewalld) runFirewallCmds(ctx context.Context, r host.Runner, argvs [][]string) error {
	if len(argvs) == 0 {
		return nil
	}
	lines := make([]string, len(argvs))
	calls := make([][]string, len(argvs))
	for i, argv := range argvs {
		lines[i] = shell.Join(argv...)
		calls[i] = argv[1:]
	}
	if f.viaFirewallCmd {
		return runScript(ctx, r, lines)
	}
	js, err := json.Marshal(calls)
	if err != nil {
		return err
	}
	_, err = r.Sudo(ctx, host.Script(firewalldBatchScript+strings.Join(lines, "\n"), firewallCmdBatch, string(js)))
	return err
}
