package cli

import (
	"errors"
	"fmt"
	"io"
)

// ExitError ends the process with Code after printing Err (when set).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

func asExit(err error, target **ExitError) bool { return errors.As(err, target) }

func printError(w io.Writer, err error) {
	_, _ = fmt.Fprintf(w, "Error: %v\n", err)
}
