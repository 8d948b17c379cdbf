// Package cli is the test engine's command line: the program name picks
// k3s or rke2 (as the real binaries' names do), --version and --help
// print what the engine prints, and server and agent read their flags from
// the command line, the environment and config.yaml exactly as the engine
// does before handing over to the daemon.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
	"github.com/colonel-byte/cargoship/test/engine/internal/daemon"
	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// Main runs the command line and returns the exit status.
func Main(argv []string) int {
	fl, named := flavor.FromProgram(argv[0])
	if !named {
		var ok bool
		if fl, ok = flavor.ByName(buildinfo.Engine); !ok {
			fmt.Fprintf(os.Stderr, "test engine built for unknown engine %q\n", buildinfo.Engine)
			return 1
		}
	}
	switch path.Base(argv[0]) {
	case "kubectl":
		return runKubectl(fl, argv[1:])
	case "crictl", "ctr":
		return notModelled(path.Base(argv[0]))
	}
	args := argv[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "--version", "-v":
			printVersion(os.Stdout, argv[0], fl)
			return 0
		case "--help", "-h":
			printHelp(os.Stdout, argv[0], fl)
			return 0
		case "--debug":
			logx.SetDebug(true)
		default:
			fmt.Fprintf(os.Stderr, "Incorrect Usage. flag provided but not defined: %s\n\n", args[0])
			printHelp(os.Stderr, argv[0], fl)
			return 1
		}
		args = args[1:]
	}
	if len(args) == 0 {
		printHelp(os.Stdout, argv[0], fl)
		return 0
	}
	switch cmd := args[0]; cmd {
	case "server", "agent":
		return runDaemon(argv[0], fl, cmd, args[1:])
	case "kubectl":
		if fl.Name != "k3s" {
			break
		}
		return runKubectl(fl, args[1:])
	case "help", "h":
		printHelp(os.Stdout, argv[0], fl)
		return 0
	case "crictl", "ctr", "etcd-snapshot", "token", "certificate", "secrets-encrypt", "check-config", "completion":
		return notModelled(cmd)
	}
	fmt.Fprintf(os.Stderr, "No help topic for '%s'\n", args[0])
	return 3
}

func notModelled(what string) int {
	fmt.Fprintf(os.Stderr, "%s: not modelled by the cargoship test engine (a test double; see docs/test-engine.md)\n", what)
	return 1
}

// runDaemon parses a server or agent command line and runs it until
// SIGINT or SIGTERM.
func runDaemon(argv0 string, fl flavor.Flavor, cmd string, cliArgs []string) int {
	for _, a := range cliArgs {
		if a == "--help" || a == "-h" {
			printCommandHelp(os.Stdout, argv0, fl, cmd)
			return 0
		}
	}
	table := flagsFor(fl, cmd)
	cfgArgs, err := configArgs(fl, table, cliArgs)
	if err != nil {
		logx.Errorf("Error: %v", err)
		return 1
	}
	args := append(cfgArgs, cliArgs...)
	v, err := parseFlags(fl, table, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Incorrect Usage: %v\n\n", err)
		printCommandHelp(os.Stderr, argv0, fl, cmd)
		return 1
	}
	if v.Bool("debug") {
		logx.SetDebug(true)
	}
	logx.Infof("Starting %s %s (%s)", fl.Name, buildinfo.Version, commit(fl))
	logx.Infof("This is the cargoship test engine, a test double for %s: no containers run", fl.Name)
	if root := os.Getenv(hostfs.RootEnv); root != "" {
		logx.Warnf("%s=%s: every engine path is under it (test-only)", hostfs.RootEnv, root)
	}
	if un := v.Unmodelled(); len(un) > 0 {
		logx.Infof("Accepted, with no effect in the test engine: %s", strings.Join(un, " "))
	}
	c, err := daemonConfig(fl, cmd, v, args)
	if err != nil {
		logx.Errorf("Error: %v", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if cmd == "server" {
		err = daemon.RunServer(ctx, c, daemon.Notify)
	} else {
		err = daemon.RunAgent(ctx, c, func() {
			logx.Infof("%s agent is up and running", fl.Name)
			daemon.Notify()
		})
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		logx.Fatalf("Error: %v", err)
	}
	return 0
}

// daemonConfig is the daemon's view of the parsed flags.
func daemonConfig(fl flavor.Flavor, cmd string, v Values, args []string) (daemon.Config, error) {
	c := daemon.Config{
		Flavor: fl, Args: nodeArgs(cmd, args),
		DataDir: v.String("data-dir"), Token: v.String("token"), TokenFile: v.String("token-file"),
		AgentToken: v.String("agent-token"), AgentTokenFile: v.String("agent-token-file"),
		ServerURL: v.String("server"), ClusterInit: v.Bool("cluster-init"),
		NodeName: v.String("node-name"), WithNodeID: v.Bool("with-node-id"),
		NodeIPs: v.Strings("node-ip"), NodeExternalIPs: v.Strings("node-external-ip"),
		NodeLabels: v.Strings("node-label"), NodeTaints: v.Strings("node-taint"),
		KubeletArgs: v.Strings("kubelet-arg"), KubeControllerManagerArgs: v.Strings("kube-controller-manager-arg"),
		KubeAPIServerArgs: v.Strings("kube-apiserver-arg"), AuditPolicyFile: v.String("audit-policy-file"),
		PodSecurityConfigFile: v.String("pod-security-admission-config-file"),
		TLSSANs:               v.Strings("tls-san"), BindAddress: v.String("bind-address"),
		WriteKubeconfig: v.String("write-kubeconfig"), WriteKubeconfigMode: v.String("write-kubeconfig-mode"),
		WriteKubeconfigGroup: v.String("write-kubeconfig-group"), DisableAgent: v.Bool("disable-agent"),
	}
	if c.DataDir == "" {
		c.DataDir = fl.DataDir()
	}
	if p := v.String("https-listen-port"); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil {
			return c, fmt.Errorf("invalid https-listen-port %q", p)
		}
		c.HTTPSListenPort = port
	}
	return c, nil
}

// nodeArgs is the node-args annotation: the command and its flags, with
// token values hidden as the engine hides them.
func nodeArgs(cmd string, args []string) []string {
	out := []string{cmd}
	for _, a := range args {
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if hasValue && (name == "token" || name == "agent-token" || name == "t") {
			a = "--" + name + "=********"
		}
		out = append(out, a)
	}
	return out
}
