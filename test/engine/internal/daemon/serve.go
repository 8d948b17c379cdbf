package daemon

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/apiserver"
	"github.com/colonel-byte/cargoship/test/engine/internal/supervisor"
)

// serve opens the server's listeners. k3s multiplexes the supervisor onto the
// API port (6443); rke2 gives it 9345 (docs/reference/engines.md 6). Client
// certificates are requested and verified by the API itself, so a request
// without one gets the apiserver's 401 rather than a TLS failure.
func serve(c Config, port int, cert tls.Certificate, api *apiserver.Server, sup *supervisor.Server) ([]*http.Server, error) {
	bind := c.BindAddress
	supHandler := sup.Handler()
	prefix := c.Flavor.SupervisorPath() + "/"
	apiHandler := http.Handler(api)
	if !c.Flavor.SplitSupervisor() {
		apiHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/cacerts" || r.URL.Path == "/ping" || strings.HasPrefix(r.URL.Path, prefix) {
				supHandler.ServeHTTP(w, r)
				return
			}
			api.ServeHTTP(w, r)
		})
	}
	var servers []*http.Server
	listen := func(p int, h http.Handler) error {
		ln, err := net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(p)))
		if err != nil {
			return err
		}
		s := &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12},
			// Handshake failures from clients that reject the
			// certificate are the client's to report.
			ErrorLog: log.New(io.Discard, "", 0),
		}
		servers = append(servers, s)
		go func() { _ = s.ServeTLS(ln, "", "") }()
		return nil
	}
	if err := listen(port, apiHandler); err != nil {
		return nil, err
	}
	if c.Flavor.SplitSupervisor() {
		if err := listen(c.Flavor.SupervisorPort, supHandler); err != nil {
			for _, s := range servers {
				_ = s.Close()
			}
			return nil, err
		}
	}
	return servers, nil
}
