// Package apiserver is the Kubernetes API subset the test engine serves on
// 6443 (docs/reference/engines.md 9): discovery, nodes, pods and their
// eviction, the workloads drain looks up, and watches, with
// client-certificate authentication against the cluster's client CA. It is
// what lets the real kubectl get, label, cordon, drain and delete nodes of a
// test cluster.
package apiserver

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// Server answers API requests from one server's copy of the store.
type Server struct {
	Store *store.Store
	// ClientCA verifies client certificates.
	ClientCA *x509.CertPool
	// Version is the engine version, reported by /version as gitVersion.
	Version, Commit string
	// Address is this apiserver's host:port, for /api.
	Address string
	// Anonymous is kube-apiserver's anonymous-auth, which k3s and rke2
	// turn off: a request with no credentials is then system:anonymous
	// instead of a 401, and may read only what RBAC's
	// system:public-info-viewer allows.
	Anonymous bool
}

// identity is who sent a request: the certificate's CN and O.
type identity struct {
	user   string
	groups []string
}

func (id identity) in(group string) bool {
	for _, g := range id.groups {
		if g == group {
			return true
		}
	}
	return false
}

// authenticate verifies the client certificate against the client CA, as
// the apiserver's x509 authenticator does; no certificate or one the CA did
// not sign is 401 (the engines run the apiserver without anonymous auth).
func (s *Server) authenticate(r *http.Request) (identity, bool) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return identity{}, false
	}
	leaf := r.TLS.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range r.TLS.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: s.ClientCA, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return identity{}, false
	}
	return identity{user: leaf.Subject.CommonName, groups: leaf.Subject.Organization}, true
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := s.authenticate(r)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if !ok {
		// Credentials that fail are a 401 even with anonymous auth on.
		credentials := r.TLS != nil && len(r.TLS.PeerCertificates) > 0 || r.Header.Get("Authorization") != ""
		if !s.Anonymous || credentials {
			writeError(w, kube.Unauthorized())
			return
		}
		id = identity{user: "system:anonymous", groups: []string{"system:unauthenticated"}}
		// Resource requests get authorize's RBAC message below.
		resourceRequest := len(parts) > 2 && (parts[0] == "api" || parts[0] == "apis")
		if !publicInfo(parts) && !resourceRequest {
			writeError(w, kube.Forbidden(fmt.Sprintf("forbidden: User %q cannot %s path %q", id.user, strings.ToLower(r.Method), r.URL.Path)))
			return
		}
	}
	switch {
	case r.URL.Path == "/version":
		s.version(w)
	case len(parts) <= 2 && (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz"):
		health(w, r, parts)
	case r.URL.Path == "/openapi/v3" || strings.HasPrefix(r.URL.Path, "/openapi/v3/"):
		s.openAPI(w, r)
	case len(parts) == 1 && parts[0] == "api":
		writeJSON(w, http.StatusOK, apiVersions(s.Address))
	case len(parts) == 1 && parts[0] == "apis":
		writeJSON(w, http.StatusOK, groupList())
	case len(parts) == 2 && parts[0] == "api" && parts[1] == "v1":
		writeJSON(w, http.StatusOK, resourceList(""))
	case len(parts) == 3 && parts[0] == "apis" && parts[2] == "v1" && knownGroup(parts[1]):
		writeJSON(w, http.StatusOK, resourceList(parts[1]))
	case len(parts) > 2 && parts[0] == "api" && parts[1] == "v1":
		s.resource(w, r, id, "", parts[2:])
	case len(parts) > 3 && parts[0] == "apis" && parts[2] == "v1" && knownGroup(parts[1]):
		s.resource(w, r, id, parts[1], parts[3:])
	default:
		writeError(w, kube.NoSuchPath())
	}
}

func knownGroup(g string) bool {
	for _, x := range groupVersions {
		if x == g {
			return true
		}
	}
	return false
}

// version is /version: the engine version as gitVersion, as k3s reports.
func (s *Server) version(w http.ResponseWriter) {
	major, minor := "", ""
	if v, ok := strings.CutPrefix(s.Version, "v"); ok {
		f := strings.SplitN(v, ".", 3)
		if len(f) >= 2 {
			major, minor = f[0], f[1]
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{
		"major": major, "minor": minor, "gitVersion": s.Version, "gitCommit": s.Commit,
		"gitTreeState": "clean", "buildDate": "", "goVersion": runtime.Version(),
		"compiler": runtime.Compiler, "platform": runtime.GOOS + "/" + runtime.GOARCH,
	})
}

// publicInfo reports whether a path is what RBAC's
// system:public-info-viewer role lets everyone read, anonymous included.
func publicInfo(parts []string) bool {
	switch parts[0] {
	case "version":
		return len(parts) == 1
	case "healthz", "livez", "readyz":
		return len(parts) <= 2
	}
	return false
}

// healthChecks are the checks /healthz, /livez and /readyz report, each
// named as the apiserver names it; the engine's always pass while it
// serves (it has no etcd quorum to lose).
var healthChecks = map[string][]string{
	"healthz": {"ping", "log", "etcd"},
	"livez":   {"ping", "log", "etcd"},
	"readyz":  {"ping", "log", "etcd", "etcd-readiness"},
}

// health answers a health endpoint as the apiserver does: "ok", or with
// ?verbose each check and "<endpoint> check passed"; /<endpoint>/<check>
// is one check. k3s and rke2 run the apiserver with anonymous-auth=false,
// so an anonymous client gets the 401 every path gives it; with
// kube-apiserver-arg anonymous-auth=true it gets the answer
// (docs/test-engine.md).
func health(w http.ResponseWriter, r *http.Request, parts []string) {
	checks := healthChecks[parts[0]]
	if len(parts) == 2 && !slices.Contains(checks, parts[1]) {
		writeError(w, kube.NoSuchPath())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose || len(parts) == 2 {
		_, _ = w.Write([]byte("ok"))
		return
	}
	var b strings.Builder
	for _, c := range checks {
		fmt.Fprintf(&b, "[+]%s ok\n", c)
	}
	fmt.Fprintf(&b, "%s check passed\n", parts[0])
	_, _ = w.Write([]byte(b.String()))
}
