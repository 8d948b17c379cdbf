package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/engine/internal/daemon"
	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// runKubectl is "k3s kubectl ..." and the kubectl symlink: the real k3s
// embeds kubectl; the test engine execs the real kubectl found on PATH
// (skipping anything that is this binary, such as the kubectl -> k3s
// symlink), with KUBECONFIG defaulting to the admin kubeconfig as k3s's
// does (K-KCTL).
func runKubectl(fl flavor.Flavor, args []string) int {
	kubectl, err := daemon.FindKubectl()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv("KUBECONFIG") == "" && !hasKubeconfigArg(args) {
		cfg := hostfs.Path(fl.Kubeconfig())
		if _, err := os.Stat(cfg); err == nil {
			_ = os.Setenv("KUBECONFIG", cfg)
		}
		if f, err := os.Open(cfg); err != nil && errors.Is(err, os.ErrPermission) {
			logx.Warnf("Unable to read %s, please start server with --write-kubeconfig-mode or --write-kubeconfig-group to modify kube config permissions", cfg)
		} else if err == nil {
			f.Close()
		}
	}
	argv := append([]string{"kubectl"}, args...)
	if err := syscall.Exec(kubectl, argv, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "exec %s: %v\n", kubectl, err)
	}
	return 1
}

func hasKubeconfigArg(args []string) bool {
	for _, a := range args {
		if a == "--kubeconfig" || strings.HasPrefix(a, "--kubeconfig=") {
			return true
		}
	}
	return false
}
