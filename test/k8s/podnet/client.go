package podnet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// The in-cluster configuration a pod gets: the API server's Service
// address in the environment, the ServiceAccount's token and the
// cluster's CA in a projected volume.
const (
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	hostEnv           = "KUBERNETES_SERVICE_HOST"
	portEnv           = "KUBERNETES_SERVICE_PORT"
)

// Client reads Nodes from the API server with a bearer token, over TLS
// verified against the cluster's CA. It is plain net/http and
// encoding/json: podnet needs two GETs, not client-go.
type Client struct {
	server    string
	tokenFile string
	http      *http.Client
}

// InClusterClient is the client a pod gets from its environment and its
// ServiceAccount volume, like client-go's rest.InClusterConfig.
func InClusterClient() (*Client, error) {
	host, port := os.Getenv(hostEnv), os.Getenv(portEnv)
	if host == "" || port == "" {
		return nil, fmt.Errorf("in-cluster config: %s and %s must be set (is this a pod?)", hostEnv, portEnv)
	}
	return NewClient("https://"+net.JoinHostPort(host, port), ServiceAccountDir+"/ca.crt", ServiceAccountDir+"/token")
}

// NewClient talks to server (https://host:port) trusting the PEM CA
// bundle in caFile, with the token in tokenFile. The token is read again
// for every request: kubelet rotates a projected token in place.
func NewClient(server, caFile, tokenFile string) (*Client, error) {
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("api server %q: want https://host:port", server)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("api server CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("api server CA %s: no PEM certificate in it", caFile)
	}
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("api server token: %w", err)
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 2,
	}
	return &Client{
		server:    strings.TrimSuffix(u.String(), "/"),
		tokenFile: tokenFile,
		http:      &http.Client{Transport: tr, Timeout: 15 * time.Second},
	}, nil
}

// APIError is a non-2xx answer from the API server.
type APIError struct {
	Path string
	Code int
	// Message is the Status object's message, or the body's start.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("GET %s: %d %s: %s", e.Path, e.Code, http.StatusText(e.Code), e.Message)
}

// Node is GET /api/v1/nodes/NAME.
func (c *Client) Node(ctx context.Context, name string) (Node, error) {
	b, err := c.get(ctx, "/api/v1/nodes/"+url.PathEscape(name))
	if err != nil {
		return Node{}, err
	}
	return ParseNode(b)
}

// Nodes is GET /api/v1/nodes: every node of the cluster.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	b, err := c.get(ctx, "/api/v1/nodes")
	if err != nil {
		return nil, err
	}
	return ParseNodeList(b)
}

// maxBody bounds what one answer may hold (a NodeList of a test cluster
// is a few hundred KiB with managedFields).
const maxBody = 32 << 20

func (c *Client) get(ctx context.Context, path string) ([]byte, error) {
	token, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("api server token: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+path, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "podnet")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read answer: %w", path, err)
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("GET %s: answer larger than %d bytes", path, maxBody)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &APIError{Path: path, Code: resp.StatusCode, Message: statusMessage(b)}
	}
	return b, nil
}

// IsNotFound reports whether err is the API server's 404.
func IsNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == http.StatusNotFound
}
