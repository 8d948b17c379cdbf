// Command nodeprobe is the one program of the image the NodeRuntime root
// tests run in containerd: with no arguments it prints its cgroups and
// waits for SIGTERM (so it also stands in for the pause image), and with
// "hog N" it allocates and touches N MiB, to be stopped by a memory limit.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "hog" {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "nodeprobe hog N: N is MiB:", err)
			os.Exit(2)
		}
		hog(n)
		return
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	fmt.Print(string(b))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}

// hog keeps n MiB alive, every page written so that it is really charged.
func hog(n int) {
	keep := make([][]byte, 0, n)
	for range n {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	fmt.Printf("allocated %d MiB\n", len(keep))
}
