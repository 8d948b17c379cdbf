package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/store"
)

// maxBody bounds a request body; API objects are small.
const maxBody = 3 << 20

func (s *Server) resource(w http.ResponseWriter, r *http.Request, id identity, group string, p []string) {
	rq, err := parseRequest(r.Method, group, p)
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	watch := rq.verb == "list" && (q.Get("watch") == "true" || q.Get("watch") == "1")
	if err := authorize(id, rq, watch); err != nil {
		writeError(w, err)
		return
	}
	if err := validateOptions(rq, q); err != nil {
		writeError(w, err)
		return
	}
	key := store.Key{Resource: rq.res.name, Namespace: rq.namespace, Name: rq.name}
	dryRun := q.Get("dryRun") == "All"
	if rq.verb == "get" || rq.verb == "list" {
		// Reads are linearizable, as the apiserver's reads from etcd
		// are: a server that missed a write catches up first.
		if err := s.Store.Sync(); err != nil {
			writeError(w, err)
			return
		}
	}
	switch {
	case watch:
		f, err := requestFilter(r)
		if err != nil {
			writeError(w, err)
			return
		}
		s.watch(w, r, rq, f)
	case rq.verb == "list":
		s.list(w, r, rq)
	case rq.verb == "get":
		obj, ok := s.Store.Get(key)
		if !ok {
			writeError(w, kube.NotFound(rq.res.name, rq.name))
			return
		}
		s.respondObject(w, r, rq, http.StatusOK, obj)
	case rq.sub == "eviction":
		s.evict(w, r, key, dryRun)
	case rq.verb == "create":
		s.create(w, r, id, rq, dryRun)
	case rq.verb == "update" || rq.verb == "patch":
		s.modify(w, r, rq, key, dryRun)
	case rq.verb == "delete":
		s.delete(w, r, rq, key, dryRun)
	}
}

// requestFilter is the request's labelSelector and fieldSelector.
func requestFilter(r *http.Request) (filter, error) {
	q := r.URL.Query()
	labels, err := parseLabelSelector(q.Get("labelSelector"))
	if err != nil {
		return filter{}, kube.BadRequest(err.Error())
	}
	fields, err := parseFieldSelector(q.Get("fieldSelector"))
	if err != nil {
		return filter{}, kube.BadRequest(err.Error())
	}
	for _, f := range fields {
		if _, ok := fieldValue(kube.Object{}, f.key); !ok {
			return filter{}, kube.BadRequest(fmt.Sprintf("field label not supported: %s", f.key))
		}
	}
	return filter{labels: labels, fields: fields}, nil
}

// list answers a list. limit is honoured by returning everything in one
// page with no continue token, which clients accept.
func (s *Server) list(w http.ResponseWriter, r *http.Request, rq request) {
	f, err := requestFilter(r)
	if err != nil {
		writeError(w, err)
		return
	}
	rv := fmt.Sprint(s.Store.RV())
	var items []kube.Object
	for _, o := range s.Store.List(rq.res.name, rq.namespace) {
		if f.match(o) {
			items = append(items, o)
		}
	}
	if wantsTable(r.Header.Get("Accept")) {
		writeJSON(w, http.StatusOK, table(rq.res.name, items, rv, r.URL.Query().Get("includeObject")))
		return
	}
	if items == nil {
		items = []kube.Object{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"kind": rq.res.kind + "List", "apiVersion": rq.res.apiVersion(),
		"metadata": map[string]any{"resourceVersion": rv}, "items": items,
	})
}

func (s *Server) respondObject(w http.ResponseWriter, r *http.Request, rq request, code int, obj kube.Object) {
	if wantsTable(r.Header.Get("Accept")) {
		writeJSON(w, code, table(rq.res.name, []kube.Object{obj}, kube.Str(obj, "metadata.resourceVersion"), r.URL.Query().Get("includeObject")))
		return
	}
	writeJSON(w, code, obj)
}

func readObject(r *http.Request) (kube.Object, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, kube.BadRequest(err.Error())
	}
	var obj kube.Object
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, kube.BadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
	}
	return obj, nil
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, id identity, rq request, dryRun bool) {
	obj, err := readObject(r)
	if err != nil {
		writeError(w, err)
		return
	}
	name := kube.Str(obj, "metadata.name")
	if name == "" {
		if gen := kube.Str(obj, "metadata.generateName"); gen != "" {
			name = gen + kube.RandomSuffix()
		} else {
			writeError(w, kube.Invalid(fmt.Sprintf("%s \"\" is invalid: metadata.name: Required value: name or generateName is required", rq.res.kind)))
			return
		}
	}
	if self, isNode := strings.CutPrefix(id.user, "system:node:"); isNode && !id.in("system:masters") && name != self {
		// NodeRestriction: a kubelet creates only its own Node.
		writeError(w, kube.Forbidden(fmt.Sprintf("nodes %q is forbidden: node %q is not allowed to modify node %q", name, self, name)))
		return
	}
	if ns := kube.Str(obj, "metadata.namespace"); ns != "" && rq.namespace != "" && ns != rq.namespace {
		writeError(w, kube.BadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	obj["apiVersion"], obj["kind"] = rq.res.apiVersion(), rq.res.kind
	kube.Set(obj, "metadata.name", name)
	if !rq.res.namespaced {
		kube.Delete(obj, "metadata.namespace")
	} else if _, ok := s.Store.Get(store.Key{Resource: "namespaces", Name: rq.namespace}); !ok {
		// NamespaceLifecycle admission: nothing is created in a
		// namespace that does not exist.
		writeError(w, kube.NotFound("namespaces", rq.namespace))
		return
	}
	if rq.res.generation {
		kube.Set(obj, "metadata.generation", float64(1))
	} else {
		kube.Delete(obj, "metadata.generation")
	}
	normalize(rq.res.name, obj)
	key := store.Key{Resource: rq.res.name, Namespace: rq.namespace, Name: name}
	if dryRun {
		if _, exists := s.Store.Get(key); exists {
			writeError(w, kube.AlreadyExists(rq.res.name, name))
			return
		}
		writeJSON(w, http.StatusCreated, obj)
		return
	}
	created, err := s.Store.Create(key, obj)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

// modify is PUT and PATCH, on an object or its status. As in the
// apiserver, the main resource of nodes and pods ignores status changes
// and the status subresource changes only status.
func (s *Server) modify(w http.ResponseWriter, r *http.Request, rq request, key store.Key, dryRun bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, kube.BadRequest(err.Error()))
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	change := func(cur kube.Object) (kube.Object, error) {
		next, err := applyChange(rq.res, r.Method, ct, body, cur)
		if err != nil {
			return nil, err
		}
		if want := kube.Str(next, "metadata.resourceVersion"); want != "" && want != kube.Str(cur, "metadata.resourceVersion") {
			return nil, kube.Conflict(rq.res.name, rq.name)
		}
		if next["apiVersion"] != nil && next["apiVersion"] != rq.res.apiVersion() || next["kind"] != nil && next["kind"] != rq.res.kind {
			return nil, kube.BadRequest(fmt.Sprintf("the object kind %v/%v does not match %s", next["apiVersion"], next["kind"], rq.res.kind))
		}
		if n := kube.Str(next, "metadata.name"); n != "" && n != rq.name {
			return nil, kube.BadRequest("the name of the object does not match the name on the URL")
		}
		next["apiVersion"], next["kind"] = rq.res.apiVersion(), rq.res.kind
		if rq.res.hasSub("status") {
			if rq.sub == "status" {
				status := next["status"]
				next = kube.DeepCopy(cur)
				next["status"] = status
			} else if cur["status"] != nil {
				next["status"] = kube.CopyValue(cur["status"])
			} else {
				delete(next, "status")
			}
		}
		if rq.res.generation {
			bumpGeneration(cur, next)
		}
		normalize(rq.res.name, next)
		return next, nil
	}
	var out kube.Object
	if dryRun {
		cur, ok := s.Store.Get(key)
		if !ok {
			writeError(w, kube.NotFound(rq.res.name, rq.name))
			return
		}
		out, err = change(cur)
	} else {
		out, err = s.Store.Update(key, change)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	s.respondObject(w, r, rq, http.StatusOK, out)
}

// bumpGeneration keeps next's metadata.generation the server's: the
// current one, plus one when anything but metadata and status changed.
func bumpGeneration(cur, next kube.Object) {
	gen, _ := kube.Get(cur, "metadata.generation").(float64)
	strip := func(o kube.Object) kube.Object {
		c := kube.DeepCopy(o)
		delete(c, "metadata")
		delete(c, "status")
		return c
	}
	if !kube.Equal(strip(cur), strip(next)) {
		gen++
	}
	kube.Set(next, "metadata.generation", gen)
}

// applyChange makes the new object from a PUT body or a patch.
func applyChange(res resource, method, contentType string, body []byte, cur kube.Object) (kube.Object, error) {
	if method == http.MethodPut {
		var obj kube.Object
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, kube.BadRequest(err.Error())
		}
		return obj, nil
	}
	accepted := false
	for _, t := range res.patchTypes() {
		accepted = accepted || t == contentType
	}
	if !accepted {
		return nil, kube.UnsupportedMediaType(res.patchTypes())
	}
	switch contentType {
	case "application/merge-patch+json", "application/strategic-merge-patch+json":
		var patch kube.Object
		if err := json.Unmarshal(body, &patch); err != nil {
			return nil, kube.BadRequest(err.Error())
		}
		if contentType == "application/merge-patch+json" {
			return kube.MergePatch(cur, patch), nil
		}
		out, err := kube.StrategicMergePatch(res.schema(), cur, patch)
		if err != nil {
			return nil, kube.Invalid(err.Error())
		}
		return out, nil
	case "application/json-patch+json":
		var ops []kube.JSONPatchOp
		if err := json.Unmarshal(body, &ops); err != nil {
			return nil, kube.BadRequest(err.Error())
		}
		out, err := kube.JSONPatch(cur, ops)
		if err != nil {
			return nil, kube.Invalid(err.Error())
		}
		return out, nil
	}
	return nil, kube.UnsupportedMediaType(res.patchTypes())
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, rq request, key store.Key, dryRun bool) {
	var (
		obj kube.Object
		err error
	)
	if dryRun {
		var ok bool
		if obj, ok = s.Store.Get(key); !ok {
			err = kube.NotFound(rq.res.name, rq.name)
		}
	} else {
		obj, err = s.Store.Delete(key)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if rq.res.name == "nodes" && !dryRun {
		s.forgetNode(rq.name)
	}
	writeJSON(w, http.StatusOK, obj)
}

// forgetNode removes what the cluster keeps about a deleted node: its
// node password secret, as k3s's node controller does, so a host
// reinstalled under the same name can join again.
func (s *Server) forgetNode(name string) {
	_, _ = s.Store.Delete(store.Key{Resource: "secrets", Namespace: "kube-system", Name: NodePasswordSecret(name)})
}

// NodePasswordSecret is the kube-system secret holding a node's password
// hash (k3s names it <node>.node-password.k3s; the engines share it).
func NodePasswordSecret(node string) string { return node + ".node-password.k3s" }

// evict is POST pods/<name>/eviction: the pod is deleted at once (the
// test engine has no running containers to stop), which a drain then sees
// as a 404 on its next poll; the ReplicaSet controller makes a
// replacement elsewhere. No PodDisruptionBudget ever blocks it.
func (s *Server) evict(w http.ResponseWriter, r *http.Request, key store.Key, dryRun bool) {
	ev, err := readObject(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if n := kube.Str(ev, "metadata.name"); n != "" && n != key.Name {
		writeError(w, kube.BadRequest("name in URL does not match name in Eviction object"))
		return
	}
	if dryRun {
		if _, ok := s.Store.Get(key); !ok {
			writeError(w, kube.NotFound("pods", key.Name))
			return
		}
	} else if _, err := s.Store.Delete(key); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, kube.Success(http.StatusCreated))
}

// normalize keeps derived fields right, as the node lifecycle controller
// does: a cordoned node carries the unschedulable NoSchedule taint; and
// fills what the apiserver fills in a namespace.
func normalize(resource string, obj kube.Object) {
	switch resource {
	case "namespaces":
		normalizeNamespace(obj)
		return
	case "nodes":
	default:
		return
	}
	unschedulable, _ := kube.Get(obj, "spec.unschedulable").(bool)
	taints, _ := kube.Get(obj, "spec.taints").([]any)
	var kept []any
	has := false
	for _, t := range taints {
		tm, _ := t.(map[string]any)
		if tm["key"] == "node.kubernetes.io/unschedulable" {
			if !unschedulable {
				continue
			}
			has = true
		}
		kept = append(kept, t)
	}
	if unschedulable && !has {
		kept = append(kept, map[string]any{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": store.Now()})
	}
	if len(kept) == 0 {
		kube.Delete(obj, "spec.taints")
	} else {
		kube.Set(obj, "spec.taints", kept)
	}
	if !unschedulable {
		kube.Delete(obj, "spec.unschedulable")
	}
}

// normalizeNamespace is the namespace strategy: the
// kubernetes.io/metadata.name label always names it, spec.finalizers
// defaults to kubernetes, a new namespace is Active.
func normalizeNamespace(obj kube.Object) {
	labels, _ := kube.Get(obj, "metadata.labels").(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels["kubernetes.io/metadata.name"] = kube.Str(obj, "metadata.name")
	kube.Set(obj, "metadata.labels", labels)
	if kube.Get(obj, "spec.finalizers") == nil {
		kube.Set(obj, "spec.finalizers", []any{"kubernetes"})
	}
	if kube.Str(obj, "status.phase") == "" {
		kube.Set(obj, "status.phase", "Active")
	}
}
