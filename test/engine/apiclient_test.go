package testengine_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/require"
)

// apiClient speaks to one server's API as the admin kubeconfig's user,
// for the tests that need requests kubectl cannot time: two writes sent
// at the same instant through two servers.
type apiClient struct {
	server string
	hc     *http.Client
}

// newAPIClient reads the kubeconfig the engine wrote (inline certificates,
// one cluster and user, as k3s writes it).
func newAPIClient(t *testing.T, kubeconfig string) *apiClient {
	t.Helper()
	b, err := os.ReadFile(kubeconfig)
	require.NoError(t, err)
	var kc struct {
		Clusters []struct {
			Cluster struct {
				CA     string `yaml:"certificate-authority-data"`
				Server string `yaml:"server"`
			} `yaml:"cluster"`
		} `yaml:"clusters"`
		Users []struct {
			User struct {
				Cert string `yaml:"client-certificate-data"`
				Key  string `yaml:"client-key-data"`
			} `yaml:"user"`
		} `yaml:"users"`
	}
	require.NoError(t, yaml.Unmarshal(b, &kc))
	require.Len(t, kc.Clusters, 1)
	require.Len(t, kc.Users, 1)
	dec := func(s string) []byte {
		out, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		return out
	}
	cert, err := tls.X509KeyPair(dec(kc.Users[0].User.Cert), dec(kc.Users[0].User.Key))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(dec(kc.Clusters[0].Cluster.CA)))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	return &apiClient{server: kc.Clusters[0].Cluster.Server, hc: &http.Client{Timeout: 30 * time.Second, Transport: tr}}
}

// do sends body (JSON-encoded unless nil) and returns the status code and
// the decoded answer. It reports errors rather than failing the test, so
// goroutines may call it.
func (c *apiClient) do(method, path, contentType string, body any) (int, map[string]any, error) {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	req, err := http.NewRequest(method, c.server+path, bytes.NewReader(data))
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: %d %s: %w", method, path, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out, nil
}

// mustDo is do in the test's goroutine, failing the test on an error.
func (c *apiClient) mustDo(t *testing.T, method, path, contentType string, body any) (int, map[string]any) {
	t.Helper()
	code, out, err := c.do(method, path, contentType, body)
	require.NoError(t, err)
	return code, out
}
