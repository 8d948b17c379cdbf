package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/apiserver"
	"github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
	"github.com/colonel-byte/cargoship/test/engine/internal/controllers"
	"github.com/colonel-byte/cargoship/test/engine/internal/deploy"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
	"github.com/colonel-byte/cargoship/test/engine/internal/supervisor"
)

// RunServer is "<engine> server": found a cluster or join one, serve the
// API (and, for rke2, the supervisor on its own port), write the token
// files and the admin kubeconfig, run the controllers and this host's own
// node, until ctx ends. ready is called when the API serves and the node
// is registered.
func RunServer(ctx context.Context, c Config, ready func()) error {
	if err := checkFiles(c, true); err != nil {
		return err
	}
	token, err := readToken(c.Token, c.TokenFile)
	if err != nil {
		return err
	}
	agentToken, err := readToken(c.AgentToken, c.AgentTokenFile)
	if err != nil {
		return err
	}
	id, err := nodeIdentity(c)
	if err != nil {
		return err
	}
	d := dataDir(c.DataDir)
	linkKubectl(c)
	cas, peerRecs, joinedPw, err := clusterMembership(ctx, c, d, token)
	if err != nil {
		return err
	}
	pw, err := serverPasswords(d, cas.server.CertPEM, token, agentToken, joinedPw)
	if err != nil {
		return err
	}
	if err := writeTokens(d, cas.server.CertPEM, pw); err != nil {
		return err
	}

	port := c.HTTPSListenPort
	if port == 0 {
		port = c.Flavor.APIPort
	}
	local := "127.0.0.1"
	if ip := net.ParseIP(c.BindAddress); ip != nil && !ip.IsUnspecified() {
		local = c.BindAddress
	}
	dns, ips := sans(c, id)
	cert, err := servingCert(d, cas.server, dns, ips)
	if err != nil {
		return err
	}
	adminCrt, adminKey, err := adminCert(d, cas.client)
	if err != nil {
		return err
	}
	kubeconfig := c.WriteKubeconfig
	if kubeconfig == "" {
		kubeconfig = c.Flavor.Kubeconfig()
	}
	apiURL := "https://" + net.JoinHostPort(local, strconv.Itoa(port))
	if err := writeKubeconfig(kubeconfig, apiURL, cas.server.CertPEM, adminCrt, adminKey, c.WriteKubeconfigMode, c.WriteKubeconfigGroup); err != nil {
		return err
	}
	logx.Infof("Wrote kubeconfig %s", hostfs.Path(kubeconfig))

	st, err := store.Open(d.state(), id.name)
	if err != nil {
		return err
	}
	st.Merge(peerRecs)
	serverTok := pki.Token{CAHash: pki.CAHash(cas.server.CertPEM), Username: "server", Password: pw.server}
	repl := &supervisor.Replicator{Client: supervisor.Client{Flavor: c.Flavor, Token: serverTok, CA: cas.server.CertPEM}, Store: st, Self: id.name}
	st.Replicate = repl.Push
	st.Leader = repl

	myAPI := net.JoinHostPort(id.ips[0], strconv.Itoa(port))
	// k3s and rke2 pass the apiserver anonymous-auth=false;
	// kube-apiserver-arg comes after it and wins.
	anonymous, _ := componentArg(c.KubeAPIServerArgs, "anonymous-auth")
	api := &apiserver.Server{Store: st, ClientCA: cas.client.Pool(), Version: buildinfo.Version, Commit: buildinfo.GitCommit, Address: myAPI,
		Anonymous: anonymous == "true"}
	sup := &supervisor.Server{Flavor: c.Flavor, Store: st, Datastore: repl, ServerCA: cas.server, ClientCA: cas.client,
		ServerPassword: pw.server, AgentPassword: pw.agent, APIServers: func() []string { return apiServers(st, myAPI, port) }}

	servers, err := serve(c, port, cert, api, sup)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	logx.Infof("Running kube-apiserver on %s (the cargoship test engine's API subset)", apiURL)

	go repl.Run(ctx)
	// Every write goes through the cluster's leader, so the namespaces
	// are made once the replicator runs.
	if err := ensureNamespaces(st); err != nil {
		return err
	}
	deployer, err := newDeployer(d, apiURL, cas.server.CertPEM, adminCrt, adminKey)
	if err != nil {
		return err
	}
	go deployer.Run(ctx)
	grace := durationArg(c.KubeControllerManagerArgs, "node-monitor-grace-period", controllers.DefaultGrace)
	go (&controllers.Manager{Store: st, Self: id.name, Grace: grace, Synced: repl.Synced}).Run(ctx)

	up := func() {
		logx.Infof("%s is up and running", c.Flavor.Name)
		ready()
	}
	if c.DisableAgent {
		up()
		<-ctx.Done()
		return nil
	}
	supPort := c.Flavor.SupervisorPort
	if !c.Flavor.SplitSupervisor() {
		supPort = port
	}
	spec := nodeSpec{fl: c.Flavor, id: id, version: buildinfo.Version, server: true, etcd: etcdMode(c, d),
		dataDir: c.DataDir, labels: c.NodeLabels, taints: c.NodeTaints, nodeArgs: c.Args}
	return runNode(ctx, c, spec, "https://"+net.JoinHostPort(local, strconv.Itoa(supPort)), serverTok.String(),
		net.JoinHostPort(local, strconv.Itoa(port)), up)
}

// clusterMembership gives the server its cluster CAs: those on disk, a
// new pair for a new cluster, or, for a first start with server: set, the
// ones fetched from that server along with its datastore. Once a
// datastore exists, server: is ignored, as the engines ignore it once
// etcd has data (docs/reference/engines.md 4).
func clusterMembership(ctx context.Context, c Config, d dataDir, token string) (*clusterCAs, []store.Record, *passwords, error) {
	existing := hostfs.Exists(d.state())
	if c.ServerURL != "" && !existing {
		if token == "" {
			return nil, nil, nil, errors.New("--token is required to join a cluster")
		}
		b, recs, err := joinServer(ctx, c, token)
		if err != nil {
			return nil, nil, nil, err
		}
		server, err := pki.ParseCA(b.ServerCACert, b.ServerCAKey)
		if err != nil {
			return nil, nil, nil, err
		}
		client, err := pki.ParseCA(b.ClientCACert, b.ClientCAKey)
		if err != nil {
			return nil, nil, nil, err
		}
		cas := &clusterCAs{server: server, client: client}
		if err := markEtcd(d); err != nil {
			return nil, nil, nil, err
		}
		return cas, recs, &passwords{agent: b.AgentPassword}, cas.save(d)
	}
	if c.ServerURL != "" {
		logx.Infof("Datastore already exists in %s; not joining %s", hostfs.Path(d.join("server", "db")), c.ServerURL)
	}
	cas, ok, err := loadCAs(d)
	if err != nil || ok {
		return cas, nil, nil, err
	}
	if existing {
		return nil, nil, nil, fmt.Errorf("datastore %s exists but the cluster CA in %s is missing", hostfs.Path(d.state()), hostfs.Path(d.tls("")))
	}
	if cas, err = newCAs(c.Flavor.Name); err != nil {
		return nil, nil, nil, err
	}
	if etcdMode(c, d) {
		if err := markEtcd(d); err != nil {
			return nil, nil, nil, err
		}
	}
	return cas, nil, nil, cas.save(d)
}

// joinServer fetches the cluster's bootstrap data and datastore from the
// server being joined. An unreachable server is retried; a wrong token is
// fatal, as for the real server (systemd restarts it).
func joinServer(ctx context.Context, c Config, token string) (supervisor.Bootstrap, []store.Record, error) {
	tok, err := pki.ParseToken(token, "server")
	if err != nil {
		return supervisor.Bootstrap{}, nil, err
	}
	for {
		cl := supervisor.Client{Flavor: c.Flavor, URL: c.ServerURL, Token: tok}
		_, err := cl.Connect(ctx)
		if err == nil {
			var b supervisor.Bootstrap
			if b, err = cl.Bootstrap(ctx); err == nil {
				var recs []store.Record
				if recs, err = cl.Snapshot(ctx); err == nil {
					logx.Infof("Joined the cluster at %s", c.ServerURL)
					return b, recs, nil
				}
			}
		}
		if strings.Contains(err.Error(), "token CA hash") || strings.Contains(err.Error(), "401") {
			return supervisor.Bootstrap{}, nil, fmt.Errorf("starting kubernetes: preparing server: failed to validate token: %w", err)
		}
		logx.Infof("Waiting to join the cluster at %s: %v", c.ServerURL, err)
		if !sleep(ctx, 5*time.Second) {
			return supervisor.Bootstrap{}, nil, ctx.Err()
		}
	}
}

// etcdMode reports whether this server runs embedded etcd: always for
// rke2; for k3s with cluster-init, when it joined a server, or when it
// did before (k3s without either keeps SQLite).
func etcdMode(c Config, d dataDir) bool {
	return c.Flavor.EtcdAlways || c.ClusterInit || c.ServerURL != "" || hostfs.Exists(d.join("server", "db", "etcd"))
}

// markEtcd makes server/db/etcd, where etcd would keep its data.
func markEtcd(d dataDir) error { return hostfs.MkdirAll(d.join("server", "db", "etcd"), 0o700) }

// sans are the serving certificate's names: localhost and 127.0.0.1, the
// in-cluster service names and address, the node's name and addresses,
// bind-address and every tls-san.
func sans(c Config, id identity) ([]string, []net.IP) {
	dns := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", id.name}
	ipStrs := []string{"127.0.0.1", "::1", "10.43.0.1"}
	ipStrs = append(ipStrs, id.ips...)
	ipStrs = append(ipStrs, id.externalIPs...)
	if c.BindAddress != "" {
		ipStrs = append(ipStrs, c.BindAddress)
	}
	for _, s := range splitList(c.TLSSANs) {
		if net.ParseIP(s) != nil {
			ipStrs = append(ipStrs, s)
		} else {
			dns = append(dns, s)
		}
	}
	seen := map[string]bool{}
	var ips []net.IP
	for _, s := range ipStrs {
		ip := net.ParseIP(s)
		if ip == nil || ip.IsUnspecified() || seen[ip.String()] {
			continue
		}
		seen[ip.String()] = true
		ips = append(ips, ip)
	}
	sort.Strings(dns)
	return dedupe(dns), ips
}

func dedupe(sorted []string) []string {
	var out []string
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// apiServers are the cluster's apiserver addresses: every control-plane
// node's InternalIP, this server's first.
func apiServers(st *store.Store, self string, port int) []string {
	out := []string{self}
	for _, n := range st.List("nodes", "") {
		if ip := kube.NodeInternalIP(n); ip != "" && kube.IsControlPlane(n) {
			out = append(out, net.JoinHostPort(ip, strconv.Itoa(port)))
		}
	}
	sort.Strings(out[1:])
	return append(out[:1], without(dedupe(out[1:]), self)...)
}

// ensureNamespaces creates the namespaces every cluster has.
func ensureNamespaces(st *store.Store) error {
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		key := store.Key{Resource: "namespaces", Name: ns}
		if _, ok := st.Get(key); ok {
			continue
		}
		obj := kube.Object{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ns, "labels": map[string]any{"kubernetes.io/metadata.name": ns}},
			"spec":     map[string]any{"finalizers": []any{"kubernetes"}}, "status": map[string]any{"phase": "Active"}}
		if _, err := st.Create(key, obj); err != nil && !isAlreadyExists(err) {
			return err
		}
	}
	return nil
}

func isAlreadyExists(err error) bool {
	var e *kube.Error
	return errors.As(err, &e) && e.Status.Reason == "AlreadyExists"
}

// newDeployer is the deploy controller of this server's manifests
// directory, a client of its own API as the admin, as k3s's deploy
// controller is of its local apiserver. Every server runs one on its own
// directory, as every k3s and rke2 server does; k3s makes the directory.
func newDeployer(d dataDir, apiURL string, caPEM, certPEM, keyPEM []byte) (*deploy.Watcher, error) {
	if err := hostfs.MkdirAll(d.manifests(), 0o700); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}}
	return &deploy.Watcher{Dir: d.manifests(), Client: &deploy.Client{Base: apiURL, HTTP: hc}}, nil
}
