package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// The datastore calls between servers, answered by dbserver.go. Status
// codes carry the leader's answers: 421 Misdirected Request is "not the
// leader", 412 Precondition Failed is store.ErrStale, and an API error
// comes back as its Status, so a follower answers its client exactly as
// the leader would have.

// recordAnswer is /db/record's body.
type recordAnswer struct {
	Found  bool         `json:"found"`
	Record store.Record `json:"record"`
}

// Leadership is the server's View.
func (c *Client) Leadership(ctx context.Context) (View, error) {
	var v View
	return v, c.dbCall(ctx, http.MethodGet, "/db/leader", nil, &v)
}

// Read is the leader's record for k.
func (c *Client) Read(ctx context.Context, k store.Key) (store.Record, bool, error) {
	q := url.Values{"resource": {k.Resource}, "namespace": {k.Namespace}, "name": {k.Name}}
	var a recordAnswer
	err := c.dbCall(ctx, http.MethodGet, "/db/record?"+q.Encode(), nil, &a)
	return a.Record, a.Found, err
}

// Commit has the leader apply cm.
func (c *Client) Commit(ctx context.Context, cm store.Commit) (store.Record, error) {
	var rec store.Record
	return rec, c.dbCall(ctx, http.MethodPost, "/db/commit", cm, &rec)
}

func (c *Client) dbCall(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+c.Flavor.SupervisorPath()+path, body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.Token.Username, c.Token.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTPClient(nil).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return json.Unmarshal(raw, out)
	case http.StatusMisdirectedRequest:
		return errNotLeader
	case http.StatusPreconditionFailed:
		return store.ErrStale
	}
	var st kube.Status
	if json.Unmarshal(raw, &st) == nil && st.Kind == "Status" {
		return &kube.Error{Status: st}
	}
	return fmt.Errorf("%s: %s", redact(req.URL), resp.Status)
}
