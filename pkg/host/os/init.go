package hostos

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Init is the host's service manager.
type Init interface {
	// InitSystem names it: "systemd" or "openrc".
	InitSystem() string
	// ServiceCommand renders start, stop, restart, reload, enable or
	// disable of unit as a command line.
	ServiceCommand(action, unit string) (string, error)
	// Service runs ServiceCommand as root.
	Service(ctx context.Context, r host.Runner, action, unit string) error
	// ServiceState is the unit's state word: active, inactive, failed,
	// activating, deactivating; "inactive" for a unit that does not exist.
	ServiceState(ctx context.Context, r host.Runner, unit string) (string, error)
	// ServiceActive reports whether the unit is running.
	ServiceActive(ctx context.Context, r host.Runner, unit string) (bool, error)
	// DaemonReload makes the manager re-read unit files (a no-op on OpenRC).
	DaemonReload(ctx context.Context, r host.Runner) error
}

var unitName = regexp.MustCompile(`^[A-Za-z0-9@._:\\-]+$`)

func checkUnit(action, unit string, actions ...string) error {
	if !unitName.MatchString(unit) {
		return fmt.Errorf("%q is not a service name", unit)
	}
	for _, a := range actions {
		if a == action {
			return nil
		}
	}
	return fmt.Errorf("unknown service action %q", action)
}

// Systemd drives services with systemctl.
type Systemd struct{}

// InitSystem implements Init.
func (Systemd) InitSystem() string { return "systemd" }

// ServiceCommand implements Init.
func (Systemd) ServiceCommand(action, unit string) (string, error) {
	if err := checkUnit(action, unit, "start", "stop", "restart", "reload", "enable", "disable"); err != nil {
		return "", err
	}
	return shell.Join("systemctl", action, unit), nil
}

// Service implements Init.
func (s Systemd) Service(ctx context.Context, r host.Runner, action, unit string) error {
	return runService(ctx, r, s, action, unit)
}

// ServiceState implements Init. The state word is parsed rather than the exit
// code, which changed for unknown units in systemd 253
// (docs/reference/hosts.md §9.1).
func (Systemd) ServiceState(ctx context.Context, r host.Runner, unit string) (string, error) {
	if err := checkUnit("is-active", unit, "is-active"); err != nil {
		return "", err
	}
	out, err := r.Sudo(ctx, host.Script(`systemctl is-active "$1" 2>/dev/null || true`, unit))
	if err != nil {
		return "", fmt.Errorf("systemctl is-active %s: %w", unit, err)
	}
	state := strings.TrimSpace(out)
	if state == "" || strings.Contains(state, " ") {
		return "", fmt.Errorf("systemctl is-active %s printed %q", unit, out)
	}
	return state, nil
}

// ServiceActive implements Init.
func (s Systemd) ServiceActive(ctx context.Context, r host.Runner, unit string) (bool, error) {
	st, err := s.ServiceState(ctx, r, unit)
	return st == "active", err
}

// DaemonReload implements Init.
func (Systemd) DaemonReload(ctx context.Context, r host.Runner) error {
	if _, err := r.Sudo(ctx, "systemctl daemon-reload"); err != nil {
		return fmt.Errorf("systemctl daemon-reload: %w", err)
	}
	return nil
}

// OpenRC drives services with rc-service and rc-update (Alpine).
type OpenRC struct{}

// InitSystem implements Init.
func (OpenRC) InitSystem() string { return "openrc" }

// ServiceCommand implements Init.
func (OpenRC) ServiceCommand(action, unit string) (string, error) {
	if err := checkUnit(action, unit, "start", "stop", "restart", "reload", "enable", "disable"); err != nil {
		return "", err
	}
	switch action {
	case "enable":
		return shell.Join("rc-update", "add", unit, "default"), nil
	case "disable":
		return shell.Join("rc-update", "del", unit, "default"), nil
	}
	return shell.Join("rc-service", unit, action), nil
}

// Service implements Init.
func (o OpenRC) Service(ctx context.Context, r host.Runner, action, unit string) error {
	return runService(ctx, r, o, action, unit)
}

// openrcStatus maps `rc-service NAME status` exit codes (openrc-run.sh
// _status, docs/reference/hosts.md §9.2) to systemd's state words.
const openrcStatus = `if ! rc-service -e "$1" >/dev/null 2>&1; then echo inactive; exit 0; fi
rc-service "$1" status >/dev/null 2>&1
case $? in 0) echo active;; 4) echo deactivating;; 8) echo activating;; 32) echo failed;; *) echo inactive;; esac`

// ServiceState implements Init.
func (OpenRC) ServiceState(ctx context.Context, r host.Runner, unit string) (string, error) {
	if err := checkUnit("status", unit, "status"); err != nil {
		return "", err
	}
	out, err := r.Sudo(ctx, host.Script(openrcStatus, unit))
	if err != nil {
		return "", fmt.Errorf("rc-service %s status: %w", unit, err)
	}
	return strings.TrimSpace(out), nil
}

// ServiceActive implements Init.
func (o OpenRC) ServiceActive(ctx context.Context, r host.Runner, unit string) (bool, error) {
	st, err := o.ServiceState(ctx, r, unit)
	return st == "active", err
}

// DaemonReload implements Init: OpenRC reads init scripts on every call.
func (OpenRC) DaemonReload(context.Context, host.Runner) error { return nil }

func runService(ctx context.Context, r host.Runner, i Init, action, unit string) error {
	cmd, err := i.ServiceCommand(action, unit)
	if err != nil {
		return err
	}
	if _, err := r.Sudo(ctx, cmd); err != nil {
		return fmt.Errorf("%s %s: %w", action, unit, err)
	}
	return nil
}

// detectInitScript: sd_booted() is "does /run/systemd/system exist"
// (docs/reference/hosts.md §9.1).
const detectInitScript = `if [ -d /run/systemd/system ]; then echo systemd
elif command -v openrc-run >/dev/null 2>&1 || command -v rc-service >/dev/null 2>&1; then echo openrc
else echo unknown; fi`

// DetectInit asks the host which service manager runs it.
func DetectInit(ctx context.Context, r host.Runner) (Init, error) {
	out, err := r.Run(ctx, host.Script(detectInitScript))
	if err != nil {
		return nil, fmt.Errorf("detecting the init system: %w", err)
	}
	switch strings.TrimSpace(out) {
	case "systemd":
		return Systemd{}, nil
	case "openrc":
		return OpenRC{}, nil
	}
	return nil, fmt.Errorf("the host runs neither systemd nor OpenRC")
}
