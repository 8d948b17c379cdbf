package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// Client is the deploy controller's connection to its server's own API,
// as k3s's deploy controller is a client of the local apiserver.
type Client struct {
	// Base is the API's URL (https://127.0.0.1:6443).
	Base string
	HTTP *http.Client

	mu    sync.Mutex
	kinds map[gvk]mapping // a positive cache, as the controller's is
}

// gvk is an object's group, version and kind.
type gvk struct{ group, version, kind string }

func gvkOf(obj kube.Object) gvk {
	g, v, ok := strings.Cut(kube.Str(obj, "apiVersion"), "/")
	if !ok {
		g, v = "", g
	}
	return gvk{g, v, kube.Str(obj, "kind")}
}

// String is apimachinery's spelling, which the controller's errors use.
func (k gvk) String() string { return k.group + "/" + k.version + ", Kind=" + k.kind }

// mapping is where a kind is served.
type mapping struct {
	gvk
	resource   string
	namespaced bool
}

// collection is the URL path of the mapping's objects in ns ("" for all
// namespaces, or a cluster-scoped resource).
func (m mapping) collection(ns string) string {
	p := "/api/v1"
	if m.group != "" {
		p = "/apis/" + m.group + "/" + m.version
	}
	if m.namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	return p + "/" + m.resource
}

func (m mapping) object(ns, name string) string { return m.collection(ns) + "/" + name }

// apiError is a failed request: the API's Status, or the message
// client-go gives a 404 without one.
func apiError(code int, body []byte) error {
	var st kube.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Message != "" {
		return &kube.Error{Status: st}
	}
	if code == http.StatusNotFound {
		return &kube.Error{Status: kube.Status{Code: code, Reason: "NotFound", Message: "the server could not find the requested resource"}}
	}
	return fmt.Errorf("an error on the server (%q) has prevented the request from succeeding", strings.TrimSpace(string(body)))
}

func reason(err error) string {
	var e *kube.Error
	if errors.As(err, &e) {
		return e.Status.Reason
	}
	return ""
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// resolve finds where k is served from its group version's discovery,
// failing as the controller's client lookup does.
func (c *Client) resolve(ctx context.Context, k gvk) (mapping, error) {
	c.mu.Lock()
	m, ok := c.kinds[k]
	c.mu.Unlock()
	if ok {
		return m, nil
	}
	p := "/api/" + k.version
	if k.group != "" {
		p = "/apis/" + k.group + "/" + k.version
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Namespaced bool   `json:"namespaced"`
			Kind       string `json:"kind"`
		} `json:"resources"`
	}
	if err := c.do(ctx, http.MethodGet, p, nil, &list); err != nil {
		return mapping{}, err
	}
	for _, r := range list.Resources {
		if r.Kind == k.kind && !strings.Contains(r.Name, "/") {
			m := mapping{gvk: k, resource: r.Name, namespaced: r.Namespaced}
			c.mu.Lock()
			if c.kinds == nil {
				c.kinds = map[gvk]mapping{}
			}
			c.kinds[k] = m
			c.mu.Unlock()
			return m, nil
		}
	}
	return mapping{}, fmt.Errorf("failed to discover client for %s", k)
}

// served is every kind the API serves, for pruning what a file no longer
// holds, whatever its kind.
func (c *Client) served(ctx context.Context) ([]mapping, error) {
	gvs := []string{"/api/v1"}
	var groups struct {
		Groups []struct {
			PreferredVersion struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := c.do(ctx, http.MethodGet, "/apis", nil, &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		gvs = append(gvs, "/apis/"+g.PreferredVersion.GroupVersion)
	}
	var out []mapping
	for _, p := range gvs {
		var list struct {
			GroupVersion string `json:"groupVersion"`
			Resources    []struct {
				Name       string   `json:"name"`
				Namespaced bool     `json:"namespaced"`
				Kind       string   `json:"kind"`
				Verbs      []string `json:"verbs"`
			} `json:"resources"`
		}
		if err := c.do(ctx, http.MethodGet, p, nil, &list); err != nil {
			return nil, err
		}
		g, v, ok := strings.Cut(list.GroupVersion, "/")
		if !ok {
			g, v = "", g
		}
		for _, r := range list.Resources {
			if !strings.Contains(r.Name, "/") {
				out = append(out, mapping{gvk: gvk{g, v, r.Kind}, resource: r.Name, namespaced: r.Namespaced})
			}
		}
	}
	return out, nil
}

func (c *Client) get(ctx context.Context, m mapping, ns, name string) (kube.Object, error) {
	var obj kube.Object
	return obj, c.do(ctx, http.MethodGet, m.object(ns, name), nil, &obj)
}

func (c *Client) create(ctx context.Context, m mapping, ns string, obj kube.Object) error {
	return c.do(ctx, http.MethodPost, m.collection(ns), obj, nil)
}

func (c *Client) update(ctx context.Context, m mapping, ns, name string, obj kube.Object) error {
	return c.do(ctx, http.MethodPut, m.object(ns, name), obj, nil)
}

func (c *Client) delete(ctx context.Context, m mapping, ns, name string) error {
	return c.do(ctx, http.MethodDelete, m.object(ns, name), nil, nil)
}

// list is the mapping's objects in every namespace carrying label=value.
func (c *Client) list(ctx context.Context, m mapping, label, value string) ([]kube.Object, error) {
	var l struct {
		Items []kube.Object `json:"items"`
	}
	err := c.do(ctx, http.MethodGet, m.collection("")+"?labelSelector="+url.QueryEscape(label+"="+value), nil, &l)
	return l.Items, err
}
