package pkgfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// actionRunner runs spec.actions.onCreate on the machine that creates the
// package, in the definition's directory.
type actionRunner struct {
	set     *v1alpha1.ActionSet
	baseDir string
	out     io.Writer
	log     *slog.Logger
}

// checkActions refuses, before anything runs, the parts of Zarf's action
// format cargoship cannot honour; running them half-way would be worse.
func checkActions(set *v1alpha1.ActionSet) error {
	if set == nil {
		return nil
	}
	lists := map[string][]v1alpha1.Action{"before": set.Before, "after": set.After, "onSuccess": set.OnSuccess, "onFailure": set.OnFailure}
	for list, actions := range lists {
		for i, a := range actions {
			field := fmt.Sprintf("spec.actions.onCreate.%s[%d]", list, i)
			switch {
			case len(a.Wait) > 0:
				return fmt.Errorf("%s: wait actions are not supported by cargoship create", field)
			case a.Cmd == "":
				return fmt.Errorf("%s: cmd is required", field)
			case a.SetVariable != "" || len(a.SetVariables) > 0 || len(a.SetValues) > 0 || a.Template:
				return fmt.Errorf("%s: setVariable, setVariables, setValues and template need package variables, which cargoship does not have", field)
			}
		}
	}
	return nil
}

// run runs one list; the first failure stops it.
func (r *actionRunner) run(ctx context.Context, list string, actions []v1alpha1.Action) error {
	for i, a := range actions {
		if err := r.runOne(ctx, a); err != nil {
			return fmt.Errorf("spec.actions.onCreate.%s[%d] (%s): %w", list, i, describe(a), err)
		}
	}
	return nil
}

func describe(a v1alpha1.Action) string {
	if a.Description != "" {
		return a.Description
	}
	return a.Cmd
}

func (r *actionRunner) runOne(ctx context.Context, a v1alpha1.Action) error {
	var defs v1alpha1.ActionDefaults
	if r.set.Defaults != nil {
		defs = *r.set.Defaults
	}
	dir := r.baseDir
	for _, d := range []string{defs.Dir, a.Dir} {
		if d != "" {
			if filepath.IsAbs(d) {
				dir = d
			} else {
				dir = filepath.Join(r.baseDir, d)
			}
		}
	}
	shell := "sh"
	for _, s := range []*v1alpha1.ActionShell{defs.Shell, a.Shell} {
		if s != nil && s.Linux != "" {
			shell = s.Linux
		}
	}
	retries := max(a.MaxRetries, defs.MaxRetries)
	limit := a.MaxTotalSeconds
	if limit == 0 {
		limit = defs.MaxTotalSeconds
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(limit)*time.Second)
		defer cancel()
	}
	out := r.out
	if a.Mute || defs.Mute || out == nil {
		out = io.Discard
	}
	var err error
	for attempt := 0; attempt <= retries; attempt++ {
		r.log.Info("running create action", "action", describe(a), "dir", dir, "attempt", attempt+1)
		cmd := exec.CommandContext(ctx, shell, "-c", a.Cmd)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), defs.Env...), a.Env...)
		cmd.Stdout, cmd.Stderr = out, out
		if err = cmd.Run(); err == nil {
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				return fmt.Errorf("did not finish within %ds: %w", limit, err)
			}
			return ctxErr
		}
	}
	return err
}
