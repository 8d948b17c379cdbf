package apiserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// watch streams changes as the apiserver does: one JSON event per line
// ({"type":"ADDED|MODIFIED|DELETED|BOOKMARK","object":...}). From
// resourceVersion "" or "0" it starts with every current object as ADDED;
// from a later one with what changed since; with sendInitialEvents it sends
// the current objects and then the initial-events-end bookmark (the
// streaming list newer clients use). kubectl wait and delete --wait
// depend on it.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, rq request, f filter) {
	q := r.URL.Query()
	flusher, _ := w.(http.Flusher)
	events, cancel := s.Store.Subscribe()
	defer cancel()

	timeout := 30 * time.Minute
	if sec, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && sec > 0 {
		timeout = time.Duration(sec) * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	asTable := wantsTable(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	sent := map[store.Key]uint64{}
	send := func(typ string, key store.Key, rv uint64, obj kube.Object) bool {
		if key.Resource != rq.res.name || (rq.namespace != "" && key.Namespace != rq.namespace) || !f.match(obj) {
			return true
		}
		if rv <= sent[key] {
			return true
		}
		sent[key] = rv
		var out any = obj
		if asTable {
			out = table(rq.res.name, []kube.Object{obj}, strconv.FormatUint(rv, 10), q.Get("includeObject"))
		}
		if err := enc.Encode(map[string]any{"type": typ, "object": out}); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}

	rv, _ := strconv.ParseUint(q.Get("resourceVersion"), 10, 64)
	if q.Get("sendInitialEvents") == "true" || rv == 0 {
		now := s.Store.RV()
		for _, o := range s.Store.List(rq.res.name, rq.namespace) {
			orv, _ := strconv.ParseUint(kube.Str(o, "metadata.resourceVersion"), 10, 64)
			key := store.Key{Resource: rq.res.name, Namespace: kube.Str(o, "metadata.namespace"), Name: kube.Str(o, "metadata.name")}
			if !send("ADDED", key, orv, o) {
				return
			}
		}
		if q.Get("sendInitialEvents") == "true" && q.Get("allowWatchBookmarks") == "true" {
			bookmark := kube.Object{"apiVersion": rq.res.apiVersion(), "kind": rq.res.kind, "metadata": map[string]any{
				"resourceVersion": strconv.FormatUint(now, 10),
				"annotations":     map[string]any{"k8s.io/initial-events-end": "true"},
			}}
			if err := enc.Encode(map[string]any{"type": "BOOKMARK", "object": bookmark}); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	} else {
		for _, e := range s.Store.Since(rq.res.name, rv) {
			if !send(e.Type, e.Key, e.RV, e.Object) {
				return
			}
		}
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-timer.C:
			return
		case e, ok := <-events:
			if !ok || !send(e.Type, e.Key, e.RV, e.Object) {
				return
			}
		}
	}
}
