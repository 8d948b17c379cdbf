package supervisor

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// dbHandlers serve the leader's side of dbclient.go. A server that does
// not lead refuses reads and writes meant for the leader, so a follower
// with an old idea of who leads asks again instead of being answered from
// a copy that may be behind.
func (s *Server) dbHandlers(mux *http.ServeMux, p string) {
	mux.HandleFunc("GET "+p+"/db/leader", s.need(roleServer, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, s.Datastore.View())
	}))
	mux.HandleFunc("GET "+p+"/db/record", s.need(roleServer, func(w http.ResponseWriter, r *http.Request) {
		if !s.Datastore.Leads() {
			http.Error(w, errNotLeader.Error(), http.StatusMisdirectedRequest)
			return
		}
		q := r.URL.Query()
		rec, ok := s.Store.Record(store.Key{Resource: q.Get("resource"), Namespace: q.Get("namespace"), Name: q.Get("name")})
		writeJSON(w, recordAnswer{Found: ok, Record: rec})
	}))
	mux.HandleFunc("POST "+p+"/db/commit", s.need(roleServer, func(w http.ResponseWriter, r *http.Request) {
		var c store.Commit
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&c); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !s.Datastore.Leads() {
			http.Error(w, errNotLeader.Error(), http.StatusMisdirectedRequest)
			return
		}
		rec, err := s.Store.Apply(c)
		var apiErr *kube.Error
		switch {
		case errors.Is(err, store.ErrStale):
			http.Error(w, err.Error(), http.StatusPreconditionFailed)
		case errors.As(err, &apiErr):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(apiErr.Status.Code)
			_ = json.NewEncoder(w).Encode(apiErr.Status)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			writeJSON(w, rec)
		}
	}))
}
