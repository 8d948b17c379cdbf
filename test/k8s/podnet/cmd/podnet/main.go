// Command podnet is the test suite's pod network daemon (package
// test/k8s/podnet): it runs on every node as a hostNetwork DaemonSet pod,
// writes the node's CNI configuration and keeps its host-gw routes.
//
// Inside a pod it needs no flags: the API server, its CA and the token
// come from the in-cluster configuration and the node's name from
// NODE_NAME. The flags point it elsewhere, for running it by hand.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/vishvananda/netlink"

	"github.com/colonel-byte/cargoship/test/k8s/podnet"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := run(log); err != nil {
		log.Error("podnet failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	var (
		server    = flag.String("server", "", "API server URL (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
		caFile    = flag.String("ca-file", podnet.ServiceAccountDir+"/ca.crt", "API server CA bundle (PEM), with -server")
		tokenFile = flag.String("token-file", podnet.ServiceAccountDir+"/token", "bearer token file, with -server")
		node      = flag.String("node", os.Getenv("NODE_NAME"), "this node's name (default: $NODE_NAME)")
		cniDir    = flag.String("cni-dir", "/etc/cni/net.d", "CNI configuration directory")
		procDir   = flag.String("proc", "/proc", "procfs mount, for net.ipv4.ip_forward")
		interval  = flag.Duration("interval", podnet.DefaultInterval, "how often to read the Nodes")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}

	var api *podnet.Client
	var err error
	if *server == "" {
		api, err = podnet.InClusterClient()
	} else {
		api, err = podnet.NewClient(*server, *caFile, *tokenFile)
	}
	if err != nil {
		return err
	}
	h, err := netlink.NewHandle()
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log.Info("podnet starting", "node", *node, "cniDir", *cniDir, "interval", interval.String())
	d := &podnet.Daemon{
		NodeName: *node,
		API:      api,
		Routes:   podnet.NewRoutes(h),
		CNIDir:   *cniDir,
		ProcDir:  *procDir,
		Interval: *interval,
		Log:      log,
	}
	return d.Run(ctx)
}
