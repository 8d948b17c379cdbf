package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/colonel-byte/cargoship/internal/repo"
)

// step prints a header, runs fn and prints how long it took.
func (d *demo) step(title string, fn func() error) error {
	d.n++
	fmt.Printf("\n==> [%d] %s\n", d.n, title)
	t := time.Now()
	if err := fn(); err != nil {
		fmt.Printf("<== [%d] FAILED after %s\n", d.n, since(t))
		return fmt.Errorf("step %d (%s): %w", d.n, title, err)
	}
	fmt.Printf("<== [%d] done in %s\n", d.n, since(t))
	return nil
}

var (
	childrenMu sync.Mutex
	children   = map[*exec.Cmd]bool{}
)

// interruptChildren passes an interrupt on to every command running now.
func interruptChildren() {
	childrenMu.Lock()
	defer childrenMu.Unlock()
	for c := range children {
		if c.Process != nil {
			_ = c.Process.Signal(os.Interrupt)
		}
	}
}

// command runs name with args in the repository with its output on the
// terminal; with capture it also returns a copy of its standard output
// (where cargoship prints its summary). Without capture the terminal is
// its own, so cargoship still sees a terminal and prints in colour. It runs in its own process
// group so a Ctrl-C reaches it once, through the demo (interruptContext):
// on cancel it gets one SIGINT and up to two minutes to clean up, which is
// what cargoship's own cleanup budget is.
func command(ctx context.Context, capture bool, env []string, name string, args ...string) (string, error) {
	fmt.Printf("$ %s\n", display(name, args, env))
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if capture {
		cmd.Stdout = io.MultiWriter(os.Stdout, &out)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	if err := cmd.Start(); err != nil {
		return "", err
	}
	childrenMu.Lock()
	children[cmd] = true
	childrenMu.Unlock()
	err := cmd.Wait()
	childrenMu.Lock()
	delete(children, cmd)
	childrenMu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return out.String(), fmt.Errorf("%s: interrupted", filepath.Base(name))
		}
		return out.String(), fmt.Errorf("%s: %w", display(name, args, nil), err)
	}
	return out.String(), nil
}

// display is a command line as a user would type it in the repository.
func display(name string, args, env []string) string {
	parts := append([]string{}, env...)
	parts = append(parts, repo.Rel(name))
	for _, a := range args {
		a = repo.Rel(a)
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// indent prints text with every line indented, for output read from hosts.
func indent(text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Println("    " + l)
	}
}
