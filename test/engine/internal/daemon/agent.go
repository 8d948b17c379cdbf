package daemon

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
	"github.com/colonel-byte/cargoship/test/engine/internal/supervisor"
)

// RunAgent is "<engine> agent": join the cluster at server with the token
// and run the node until ctx ends. ready is called once the node is
// registered (the unit's sd_notify READY).
func RunAgent(ctx context.Context, c Config, ready func()) error {
	if c.ServerURL == "" {
		return errors.New("--server is required")
	}
	token, err := readToken(c.Token, c.TokenFile)
	if err != nil {
		return err
	}
	if token == "" {
		return errors.New("--token is required")
	}
	if err := checkFiles(c, false); err != nil {
		return err
	}
	id, err := nodeIdentity(c)
	if err != nil {
		return err
	}
	linkKubectl(c)
	spec := nodeSpec{fl: c.Flavor, id: id, version: buildinfo.Version, dataDir: c.DataDir,
		labels: c.NodeLabels, taints: c.NodeTaints, nodeArgs: c.Args}
	return runNode(ctx, c, spec, c.ServerURL, token, "", ready)
}

// runNode joins through the supervisor at serverURL and runs the kubelet.
// A server passes its own apiserver as preferAPI.
func runNode(ctx context.Context, c Config, spec nodeSpec, serverURL, token, preferAPI string, ready func()) error {
	user := "node"
	if spec.server {
		user = "server"
	}
	tok, err := pki.ParseToken(token, user)
	if err != nil {
		return err
	}
	d := dataDir(c.DataDir)
	j, err := join(ctx, c, d, spec, serverURL, tok)
	if err != nil {
		return err
	}
	apis := j.apis
	if preferAPI != "" {
		apis = append([]string{preferAPI}, without(apis, preferAPI)...)
	}
	interval := 10 * time.Second
	if v := kubeletInterval(c); v != "" {
		if iv, err := time.ParseDuration(v); err == nil && iv > 0 {
			interval = iv
		}
	}
	k := &kubelet{spec: spec, client: j.client.HTTPClient(&j.cert), interval: interval, apis: apis}
	go refreshAPIs(ctx, k, d, c, serverURL, preferAPI, c.Flavor.APIPort)
	k.run(ctx, ready)
	return nil
}

// joined is what a successful join gives the node.
type joined struct {
	client supervisor.Client
	cert   tls.Certificate
	apis   []string
}

// join validates the server and token and gets the node's certificate,
// retrying for ever as the real agent does: a wrong token or an
// unreachable server is logged and tried again, so the unit stays
// "activating" and never reports ready.
func join(ctx context.Context, c Config, d dataDir, spec nodeSpec, serverURL string, tok pki.Token) (joined, error) {
	for {
		for _, u := range candidates(d, serverURL) {
			j, err := tryJoin(ctx, c, d, spec, u, serverURL, tok)
			if err == nil {
				return j, nil
			}
			var notReady configError
			if errors.As(err, &notReady) {
				logx.Infof("Waiting to retrieve agent configuration; server is not ready: %v", notReady.err)
				break
			}
			logx.Errorf("Failed to validate connection to cluster at %s: %v", serverURL, err)
		}
		if !sleep(ctx, 2*time.Second) {
			return joined{}, ctx.Err()
		}
	}
}

// configError is a failure after the token was accepted: the server would
// not give this node its configuration (a rejected node password).
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }

// tryJoin joins through the supervisor at u once.
func tryJoin(ctx context.Context, c Config, d dataDir, spec nodeSpec, u, serverURL string, tok pki.Token) (joined, error) {
	cl := supervisor.Client{Flavor: c.Flavor, URL: u, Token: tok}
	warn, err := cl.Connect(ctx)
	if err != nil {
		return joined{}, err
	}
	apis, err := cl.APIServers(ctx)
	if err != nil {
		return joined{}, fmt.Errorf("token is not valid: %w", err)
	}
	if warn != "" {
		logx.Warnf("%s", warn)
	}
	cert, pem, err := cl.KubeletCert(ctx, spec.id.name, spec.id.password)
	if err != nil {
		return joined{}, configError{fmt.Errorf("%s: %w", hostfs.Path(d.agent("client-kubelet.crt")), err)}
	}
	if err := writeAgentFiles(d, c, cl.CA, pem, serverURL, apis); err != nil {
		return joined{}, err
	}
	return joined{client: cl, cert: cert, apis: apis}, nil
}

// lbFile is the agent's load-balancer state, as k3s keeps it in
// agent/etc/<engine>-agent-load-balancer.json.
type lbFile struct {
	ServerURL       string   `json:"ServerURL"`
	ServerAddresses []string `json:"ServerAddresses"`
	Listener        string   `json:"Listener"`
}

func (d dataDir) lbFile(program string) string {
	return d.join("agent", "etc", program+"-agent-load-balancer.json")
}

// candidates are the supervisor URLs to try: server first, then the
// servers remembered from the last run, so a restarted agent does not
// depend on the first server still being there.
func candidates(d dataDir, serverURL string) []string {
	out := []string{serverURL}
	u, err := url.Parse(serverURL)
	if err != nil {
		return out
	}
	for _, f := range []string{"k3s", "rke2"} {
		b, err := hostfs.ReadFile(d.lbFile(f))
		if err != nil {
			continue
		}
		var lb lbFile
		if json.Unmarshal(b, &lb) != nil {
			continue
		}
		for _, a := range lb.ServerAddresses {
			host, _, err := net.SplitHostPort(a)
			if err != nil {
				continue
			}
			cand := "https://" + net.JoinHostPort(host, u.Port())
			if cand != serverURL {
				out = append(out, cand)
			}
		}
	}
	return out
}

// writeAgentFiles writes what a joined agent keeps under agent/: the
// cluster CA, the kubelet's certificate, its kubeconfig, and the
// load-balancer state.
func writeAgentFiles(d dataDir, c Config, ca, certKeyPEM []byte, serverURL string, apis []string) error {
	if err := hostfs.WriteFile(d.agent("server-ca.crt"), ca, 0o644); err != nil {
		return err
	}
	cert, key := splitPEM(certKeyPEM)
	if err := hostfs.WriteFile(d.agent("client-kubelet.crt"), cert, 0o644); err != nil {
		return err
	}
	if err := hostfs.WriteFile(d.agent("client-kubelet.key"), key, 0o600); err != nil {
		return err
	}
	api := "127.0.0.1:" + strconv.Itoa(c.Flavor.APIPort)
	if len(apis) > 0 {
		api = apis[0]
	}
	if err := writeKubeconfig(d.agent("kubelet.kubeconfig"), "https://"+api, ca, cert, key, "0600", ""); err != nil {
		return err
	}
	lb, _ := json.MarshalIndent(lbFile{ServerURL: serverURL, ServerAddresses: apis, Listener: "127.0.0.1:6444"}, "", "  ")
	return hostfs.WriteFile(d.lbFile(c.Flavor.Name), lb, 0o600)
}

// splitPEM separates the certificate blocks from the key block.
func splitPEM(b []byte) (cert, key []byte) {
	s := string(b)
	i := strings.Index(s, "-----BEGIN EC PRIVATE KEY-----")
	if i < 0 {
		return b, nil
	}
	return []byte(s[:i]), []byte(s[i:])
}

// refreshAPIs keeps the kubelet's apiserver list current from the
// control-plane nodes, as the agent's load balancer follows the apiserver
// endpoints, and saves it so a restart does not depend on server:.
func refreshAPIs(ctx context.Context, k *kubelet, d dataDir, c Config, serverURL, preferAPI string, port int) {
	for first := true; first || sleep(ctx, 5*time.Second); first = false {
		var list struct {
			Items []kube.Object `json:"items"`
		}
		if err := k.call(ctx, http.MethodGet, "/api/v1/nodes?labelSelector=node-role.kubernetes.io%2Fcontrol-plane%3Dtrue", "", nil, &list); err != nil {
			continue
		}
		var apis []string
		for _, n := range list.Items {
			if ip := kube.NodeInternalIP(n); ip != "" {
				apis = append(apis, net.JoinHostPort(ip, strconv.Itoa(port)))
			}
		}
		if len(apis) == 0 {
			continue
		}
		k.mu.Lock()
		cur := ""
		if len(k.apis) > 0 {
			cur = k.apis[0]
		}
		if preferAPI != "" {
			cur = preferAPI
		}
		if cur != "" {
			k.apis = append([]string{cur}, without(apis, cur)...)
		} else {
			k.apis = apis
		}
		k.mu.Unlock()
		lb, _ := json.MarshalIndent(lbFile{ServerURL: serverURL, ServerAddresses: apis, Listener: "127.0.0.1:6444"}, "", "  ")
		_ = hostfs.WriteFile(d.lbFile(c.Flavor.Name), lb, 0o600)
	}
}

func without(list []string, x string) []string {
	var out []string
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}
