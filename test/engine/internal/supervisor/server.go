// Package supervisor is the join side of the engine: the HTTPS endpoints a
// joining agent or server calls on an existing server (k3s serves them on
// 6443 next to the API, rke2 on 9345), and the client that calls them.
//
// /cacerts and /ping are the real engines' paths and answers. The
// /v1-<engine>/ paths are this double's own protocol for the same steps
// (get a kubelet certificate, learn the apiservers, fetch the cluster CA as
// a joining server, replicate the datastore between servers); only the test
// engine talks to them.
package supervisor

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"

	"github.com/colonel-byte/cargoship/test/engine/internal/apiserver"
	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
	"github.com/colonel-byte/cargoship/test/engine/internal/pki"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// NodePasswordRejected is the engines' message when a node name is taken
// by a host with another /etc/rancher/node/password.
const NodePasswordRejected = "Node password rejected, duplicate hostname or contents of '/etc/rancher/node/password' may not match server node-passwd entry, try enabling a unique node name with the --with-node-id flag"

// Bootstrap is what a joining server gets: the cluster's CAs and
// passwords, the part of k3s's bootstrap data the double needs.
type Bootstrap struct {
	ServerCACert, ServerCAKey []byte
	ClientCACert, ClientCAKey []byte
	AgentPassword             string
}

// Server serves the supervisor endpoints of one server.
type Server struct {
	Flavor flavor.Flavor
	Store  *store.Store
	// Datastore says who leads the cluster's writes.
	Datastore                     *Replicator
	ServerCA, ClientCA            *pki.CA
	ServerPassword, AgentPassword string
	// APIServers lists the cluster's apiserver addresses (host:port).
	APIServers func() []string
}

type role int

const (
	roleNone role = iota
	roleNode
	roleServer
)

// authenticate checks basic auth against the passwords, as k3s checks its
// server/cred/passwd: user "server" with the server token, user "node"
// with the agent token.
func (s *Server) authenticate(r *http.Request) role {
	user, pass, ok := r.BasicAuth()
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	switch {
	case !ok:
	case user == "server" && eq(pass, s.ServerPassword):
		return roleServer
	case user == "node" && eq(pass, s.AgentPassword):
		return roleNode
	}
	logx.Errorf("Failed to authenticate request from %s: invalid username/password combination", r.RemoteAddr)
	return roleNone
}

// Handler serves the supervisor paths.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cacerts", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(s.ServerCA.CertPEM)
	})
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("pong"))
	})
	p := s.Flavor.SupervisorPath()
	mux.HandleFunc("GET "+p+"/client-kubelet.crt", s.need(roleNode, s.kubeletCert))
	mux.HandleFunc("GET "+p+"/apiservers", s.need(roleNode, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, s.APIServers())
	}))
	mux.HandleFunc("GET "+p+"/server-bootstrap", s.need(roleServer, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, Bootstrap{
			ServerCACert: s.ServerCA.CertPEM, ServerCAKey: s.ServerCA.KeyPEM,
			ClientCACert: s.ClientCA.CertPEM, ClientCAKey: s.ClientCA.KeyPEM,
			AgentPassword: s.AgentPassword,
		})
	}))
	mux.HandleFunc("GET "+p+"/db", s.need(roleServer, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, s.Store.Snapshot())
	}))
	s.dbHandlers(mux, p)
	mux.HandleFunc("POST "+p+"/db", s.need(roleServer, func(w http.ResponseWriter, r *http.Request) {
		var recs []store.Record
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&recs); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.Store.Merge(recs)
		w.WriteHeader(http.StatusNoContent)
	}))
	return mux
}

// need wraps a handler with authentication; a server may do what a node
// may.
func (s *Server) need(min role, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.authenticate(r) < min {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

var nodeName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// kubeletCert issues the node's kubelet client certificate after checking
// the node password against the node's password secret (created on first
// join), as k3s does before it hands a node its certificates.
func (s *Server) kubeletCert(w http.ResponseWriter, r *http.Request) {
	h := s.Flavor.HeaderPrefix()
	name, password := r.Header.Get(h+"Node-Name"), r.Header.Get(h+"Node-Password")
	if !nodeName.MatchString(name) || len(name) > 253 || password == "" {
		http.Error(w, "invalid node name or password", http.StatusBadRequest)
		return
	}
	if err := s.checkNodePassword(name, password); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	cert, key, err := s.ClientCA.Issue(pki.Leaf{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(append(cert, key...))
}

type passwordError struct{}

func (passwordError) Error() string { return NodePasswordRejected }

func (s *Server) checkNodePassword(name, password string) error {
	sum := sha256.Sum256([]byte(password))
	hash := base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString(sum[:])))
	key := store.Key{Resource: "secrets", Namespace: "kube-system", Name: apiserver.NodePasswordSecret(name)}
	if sec, ok := s.Store.Get(key); ok {
		if kube.Str(sec, "data.hash") != hash {
			logx.Errorf("Node password validation failed for '%s'", name)
			return passwordError{}
		}
		return nil
	}
	_, err := s.Store.Create(key, kube.Object{
		"apiVersion": "v1", "kind": "Secret", "type": s.Flavor.Name + ".cattle.io/node-password",
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"data":     map[string]any{"hash": hash},
	})
	return err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
