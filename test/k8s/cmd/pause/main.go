// Command pause is the process a pod's sandbox container runs: it holds
// the pod's namespaces, reaps the zombies of a shared PID namespace, and
// exits 0 on SIGINT or SIGTERM. It does what Kubernetes' pause.c does, in
// Go so it builds statically without a C toolchain.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set with -ldflags -X main.version=3.10.1.
var version = "unknown"

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Printf("pause.go v%s\n", version)
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", s)
		os.Exit(0)
	}
}

// reap waits for every child that has exited, without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
