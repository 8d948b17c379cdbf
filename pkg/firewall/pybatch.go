package firewall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// firewall-cmd and ufw are Python scripts, and most of a run's CPU is
// their imports: a change of a dozen calls cost a dozen Python starts,
// about 40 seconds on an emulated host. pythonBatch runs such a script's
// own program once per argument list in one Python process: the same
// code, the same output, warnings, errors and exit codes as separate runs,
// the imports paid once (docs/reference/hosts.md §5.1). It stops at the
// first call that fails, with that call's exit code, as `set -e` over
// separate runs does. argv[1] is the script's path, argv[2] the argument
// lists as JSON. It is given to `python -c`: see firewalldDBusProgram for
// why not as a file. It must run on Python 3.6.
const pythonBatch = `import json, runpy, sys
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

// toolPython defines pyof: it sets tool to the path of the command $1 and
// py to the Python interpreter named on its first line, or returns 1 when
// there is no such command or its first line names no Python. py is meant
// to be used unquoted, without globbing: it may carry flags
// ("/usr/libexec/platform-python -s") and follow a space ("#!
// /usr/bin/python3" is ufw's).
const toolPython = `pyof() {
  tool=$(command -v "$1") || return 1
  { IFS= read -r py < "$tool"; } 2>/dev/null || return 1
  case $py in "#!"*python*) py=${py#"#!"} ;; *) return 1 ;; esac
}
`

// pythonBatchScript runs $2 (JSON argument lists) through pythonBatch
// ($1) with the tool $3 under the interpreter on the tool's first line,
// or, when that is not a Python one, runs the command lines after it one
// by one.
const pythonBatchScript = "set -e\n" + toolPython + `if pyof "$3"; then set -f; exec $py -c "$1" "$tool" "$2"; fi
`

// runToolCalls runs each argument list, whose first word names the same
// tool for all, in one Python process where the tool is a Python script,
// else (or when separate) as separate runs.
func runToolCalls(ctx context.Context, r host.Runner, argvs [][]string, separate bool) error {
	if len(argvs) == 0 {
		return nil
	}
	tool := argvs[0][0]
	lines := make([]string, len(argvs))
	calls := make([][]string, len(argvs))
	for i, argv := range argvs {
		if argv[0] != tool {
			return fmt.Errorf("internal error: %s and %s in one batch", tool, argv[0])
		}
		lines[i] = shell.Join(argv...)
		calls[i] = argv[1:]
	}
	if separate {
		return runScript(ctx, r, lines)
	}
	js, err := json.Marshal(calls)
	if err != nil {
		return err
	}
	_, err = r.Sudo(ctx, host.Script(pythonBatchScript+strings.Join(lines, "\n"), pythonBatch, string(js), tool))
	return err
}

// argvs is p's commands as argument lists.
func argvs(p Plan) [][]string {
	var out [][]string
	for _, a := range p.Actions {
		if a.Command != "" {
			out = append(out, a.argv)
		}
	}
	return out
}

// addArgv plans one command given as its words.
func (p *Plan) addArgv(summary string, argv ...string) {
	p.Actions = append(p.Actions, Action{Summary: summary, Command: shell.Join(argv...), argv: argv})
}
