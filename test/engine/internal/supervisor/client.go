package supervisor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// Client talks to one server's supervisor with a token.
type Client struct {
	Flavor flavor.Flavor
	// URL is the server's supervisor URL, e.g. https://10.0.0.1:6443.
	URL   string
	Token pki.Token
	// CA, once validated, verifies the server.
	CA []byte
	// Shared, when set, is used for the calls that present no client
	// certificate, so that servers calling each other many times a
	// second keep their connections instead of a TLS handshake a call.
	Shared *http.Client
}

// Connect fetches the cluster CA from /cacerts without verification and
// checks it against the token's CA hash, then keeps it to verify every later
// request, as k3s's clientaccess does (docs/reference/engines.md 4). A token
// without a hash only warns, as in the real engine.
func (c *Client) Connect(ctx context.Context) (warning string, err error) {
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the token's hash verifies what comes back
	}}
	body, err := get(ctx, insecure, c.URL+"/cacerts", "", "")
	if err != nil {
		return "", fmt.Errorf("failed to get CA certs: %w", err)
	}
	if c.Token.CAHash == "" {
		warning = "Cluster CA certificate is not trusted by the host CA bundle, but the token does not include a CA hash. Use the full token from the server's node-token file to enable Cluster CA validation."
	} else if got := pki.CAHash(body); got != c.Token.CAHash {
		return "", fmt.Errorf("token CA hash does not match the Cluster CA certificate hash: %s != %s", c.Token.CAHash, got)
	}
	if _, err := pki.ParseCert(body); err != nil {
		return "", fmt.Errorf("failed to get CA certs: %w", err)
	}
	c.CA = body
	return warning, nil
}

// HTTPClient verifies servers against the validated CA; cert, when set,
// is presented as a client certificate.
func (c *Client) HTTPClient(cert *tls.Certificate) *http.Client {
	if cert == nil && c.Shared != nil {
		return c.Shared
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CA)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func (c *Client) call(ctx context.Context, path string, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+c.Flavor.SupervisorPath()+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.Token.Username, c.Token.Password)
	for k, v := range header {
		req.Header[k] = v
	}
	return do(c.HTTPClient(nil), req)
}

// KubeletCert gets the node's kubelet client certificate and key.
func (c *Client) KubeletCert(ctx context.Context, node, password string) (tls.Certificate, []byte, error) {
	h := http.Header{}
	h.Set(c.Flavor.HeaderPrefix()+"Node-Name", node)
	h.Set(c.Flavor.HeaderPrefix()+"Node-Password", password)
	body, err := c.call(ctx, "/client-kubelet.crt", h)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err := tls.X509KeyPair(body, body)
	return cert, body, err
}

// APIServers is the cluster's apiserver addresses.
func (c *Client) APIServers(ctx context.Context) ([]string, error) {
	body, err := c.call(ctx, "/apiservers", nil)
	if err != nil {
		return nil, err
	}
	var out []string
	return out, json.Unmarshal(body, &out)
}

// Bootstrap fetches the cluster CAs and passwords, for a joining server.
func (c *Client) Bootstrap(ctx context.Context) (Bootstrap, error) {
	var b Bootstrap
	body, err := c.call(ctx, "/server-bootstrap", nil)
	if err != nil {
		return b, err
	}
	return b, json.Unmarshal(body, &b)
}

// Snapshot fetches a server's whole datastore.
func (c *Client) Snapshot(ctx context.Context) ([]store.Record, error) {
	body, err := c.call(ctx, "/db", nil)
	if err != nil {
		return nil, err
	}
	var recs []store.Record
	return recs, json.Unmarshal(body, &recs)
}

// Push sends records to a server's datastore.
func (c *Client) Push(ctx context.Context, recs []store.Record) error {
	body, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+c.Flavor.SupervisorPath()+"/db", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.Token.Username, c.Token.Password)
	req.Header.Set("Content-Type", "application/json")
	_, err = do(c.HTTPClient(nil), req)
	return err
}

func get(ctx context.Context, hc *http.Client, u, user, pass string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	return do(hc, req)
}

// do runs a request and turns a non-2xx answer into an error that reads
// like k3s's: "<url>: 401 Unauthorized", or the server's message.
func do(hc *http.Client, req *http.Request) ([]byte, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(body))
		if resp.StatusCode == http.StatusForbidden && msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("%s: %s", redact(req.URL), resp.Status)
	}
	return body, nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
