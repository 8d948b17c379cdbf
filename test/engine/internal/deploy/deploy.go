// Package deploy is the k3s/rke2 deploy controller: every server applies
// the *.yaml, *.yml and *.json files under <data-dir>/server/manifests
// when it starts and again whenever a file changes, the way the engines'
// "Auto-Deploying Manifests" do (docs/test-engine.md). Each file is an
// AddOn named after its base name; its objects carry the AddOn's owner
// annotations and hash label, are updated with a three-way merge against
// the configuration last applied, and an object dropped from the file is
// deleted. The AddOn objects themselves, their events and the packaged
// components' manifests are not modelled; neither is the disable flag.
package deploy

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// Interval is how often the directory is read. k3s and rke2 read it
// every 15 s; the test engine every 5 s, so tests wait less. Nothing
// should depend on either.
const Interval = 5 * time.Second

// The annotations and label the engines' apply library puts on what an
// AddOn owns.
const (
	annApplied   = "objectset.rio.cattle.io/applied"
	annID        = "objectset.rio.cattle.io/id"
	annOwnerGVK  = "objectset.rio.cattle.io/owner-gvk"
	annOwnerName = "objectset.rio.cattle.io/owner-name"
	annOwnerNS   = "objectset.rio.cattle.io/owner-namespace"
	labelHash    = "objectset.rio.cattle.io/hash"
	labelPrune   = "objectset.rio.cattle.io/prune"
	addonGVK     = "k3s.cattle.io/v1, Kind=Addon"
	addonNS      = "kube-system"
)

// Watcher applies one server's manifests directory.
type Watcher struct {
	// Dir is the engine path of the directory.
	Dir    string
	Client *Client
	// Interval between reads; 0 is Interval.
	Interval time.Duration

	modTime map[string]time.Time
	applied map[string]string // checksum of each file's last successful apply
}

// Run reads the directory until ctx ends. As in k3s, the first pass
// applies every file; later passes apply the files whose modification
// time changed, unless their content did not; after a pass with an error
// every file is applied again on the next.
func (w *Watcher) Run(ctx context.Context) {
	interval := w.Interval
	if interval == 0 {
		interval = Interval
	}
	force := true
	for {
		if err := w.Pass(ctx, force); err == nil {
			force = false
		} else {
			logx.Errorf("Failed to process config: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// Pass reads the directory once, applying the files that need it.
func (w *Watcher) Pass(ctx context.Context, force bool) error {
	if w.modTime == nil {
		w.modTime, w.applied = map[string]time.Time{}, map[string]string{}
	}
	base := hostfs.Path(w.Dir)
	files := map[string]fs.FileInfo{}
	err := filepath.Walk(base, func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		// A symlinked directory at the top is followed, as k3s does.
		if info.Mode()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				if real, err := filepath.EvalSymlinks(p); err == nil {
					_ = filepath.Walk(real, func(q string, i fs.FileInfo, err error) error {
						if err == nil {
							files[q] = i
						}
						return err
					})
				}
			}
		}
		files[p] = info
		return nil
	})
	if err != nil {
		return err
	}
	skips := map[string]bool{}
	var paths []string
	for p, info := range files {
		if name, ok := strings.CutSuffix(info.Name(), ".skip"); ok {
			skips[name] = true
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var errs []string
	for _, p := range paths {
		info := files[p]
		if info.IsDir() || skipFile(info.Name(), skips) {
			continue
		}
		if !force && info.ModTime().Equal(w.modTime[p]) {
			continue
		}
		if err := w.deploy(ctx, p, !force); err != nil {
			errs = append(errs, fmt.Sprintf("failed to process %s: %v", p, err))
			continue
		}
		w.modTime[p] = info.ModTime()
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, ", "))
	}
	return nil
}

// skipFile: dotfiles, files a <name>.skip names, and anything but YAML or
// JSON are not applied.
func skipFile(name string, skips map[string]bool) bool {
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(name, "."), skips[name]:
		return true
	}
	return !strings.HasSuffix(lower, ".yaml") && !strings.HasSuffix(lower, ".yml") && !strings.HasSuffix(lower, ".json")
}

// rfc1123Subdomain is what an AddOn's name, and so a file's base name,
// must be.
var rfc1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// deploy applies one file (path on this machine) as its AddOn.
func (w *Watcher) deploy(ctx context.Context, path string, compareChecksum bool) error {
	name := strings.SplitN(filepath.Base(path), ".", 2)[0]
	if len(name) > 253 || !rfc1123Subdomain.MatchString(name) {
		return fmt.Errorf(`Addon.k3s.cattle.io %q is invalid: metadata.name: Invalid value: %q: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`, name, name)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(content)
	checksum := hex.EncodeToString(sum[:])
	if compareChecksum && w.applied[path] == checksum {
		return nil
	}
	objs, err := parse(content)
	if err != nil {
		return err
	}
	event(name, "Normal", "ApplyingManifest", fmt.Sprintf("Applying manifest at %q", path))
	if err := w.Client.apply(ctx, name, objs); err != nil {
		event(name, "Warning", "ApplyManifestFailed", fmt.Sprintf("Applying manifest at %q failed: %v", path, err))
		return err
	}
	event(name, "Normal", "AppliedManifest", fmt.Sprintf("Applied manifest at %q", path))
	w.applied[path] = checksum
	return nil
}

// event logs an AddOn event as k3s's event recorder logs them.
func event(addon, typ, reason, msg string) {
	logx.Infof(`Event(v1.ObjectReference{Kind:"Addon", Namespace:%q, Name:%q, APIVersion:"k3s.cattle.io/v1"}): type: '%s' reason: '%s' %s`, addonNS, addon, typ, reason, msg)
}

// parse reads the YAML (or JSON) documents of a manifest, as the engines'
// YAML reader splits them, expanding a List into its items.
func parse(content []byte) ([]kube.Object, error) {
	var out []kube.Object
	for _, doc := range splitDocuments(content) {
		if emptyYAML(doc) {
			continue
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var obj kube.Object
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, fmt.Errorf("couldn't get version/kind; json parse error: %w", err)
		}
		if kube.Str(obj, "kind") == "" {
			return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", b) //nolint:staticcheck // apimachinery's message, verbatim
		}
		if kube.Str(obj, "apiVersion") == "" {
			return nil, fmt.Errorf("Object 'apiVersion' is missing in '%s'", b) //nolint:staticcheck // apimachinery's message, verbatim
		}
		if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kube.Str(obj, "kind"), "List") {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					out = append(out, m)
				}
			}
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// splitDocuments splits on "---" separator lines.
func splitDocuments(content []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(content, []byte("\n")) {
		if t := bytes.TrimRight(line, " \t\r\n"); bytes.HasPrefix(t, []byte("---")) && len(bytes.TrimSpace(t[3:])) == 0 {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

// emptyYAML reports whether a document holds only blank lines and
// comments.
func emptyYAML(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		s := bytes.TrimSpace(l)
		if len(s) > 0 && string(s) != "---" && !bytes.HasPrefix(s, []byte("#")) {
			return false
		}
	}
	return true
}

// apply applies an AddOn's objects as the engines' apply library does:
// kind by kind in the order the file first names them, each object
// created or three-way merged, then the objects the AddOn owns that the
// file no longer holds deleted. Errors do not stop the other kinds.
func (c *Client) apply(ctx context.Context, addon string, objs []kube.Object) error {
	hash := objectSetHash(addon)
	debugID := fmt.Sprintf(" %s/%s", addonNS, addon)
	var order []gvk
	byKind := map[gvk][]kube.Object{}
	for _, o := range objs {
		o = kube.DeepCopy(o)
		own(o, addon, hash)
		k := gvkOf(o)
		if _, ok := byKind[k]; !ok {
			order = append(order, k)
		}
		byKind[k] = append(byKind[k], o)
	}
	var errs []string
	fail := func(err error) { errs = append(errs, err.Error()) }
	done := map[string]bool{}
	for _, k := range order {
		m, err := c.resolve(ctx, k)
		if err != nil {
			fail(err)
			continue
		}
		done[m.resource] = true
		want := map[string]bool{}
		for _, o := range byKind[k] {
			ns := ""
			if m.namespaced {
				if ns = kube.Str(o, "metadata.namespace"); ns == "" {
					ns = "default"
				}
				kube.Set(o, "metadata.namespace", ns)
			} else {
				kube.Delete(o, "metadata.namespace")
			}
			name := kube.Str(o, "metadata.name")
			want[ns+"/"+name] = true
			if op, err := c.applyOne(ctx, m, ns, name, o); err != nil {
				fail(fmt.Errorf("failed to %s %s %s for %s: %w", op, key(ns, name), k, debugID, err))
			}
		}
		if err := c.prune(ctx, m, hash, want, debugID); err != nil {
			fail(err)
		}
	}
	// Kinds the file no longer holds: what the AddOn owns of them goes.
	if served, err := c.served(ctx); err == nil {
		for _, m := range served {
			if !done[m.resource] {
				done[m.resource] = true
				if err := c.prune(ctx, m, hash, nil, debugID); err != nil {
					fail(err)
				}
			}
		}
	} else {
		fail(err)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, ", "))
	}
	return nil
}

func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// applyOne creates the object, or takes over an existing one (owned or
// not), merging the file's configuration into it; op names what failed.
func (c *Client) applyOne(ctx context.Context, m mapping, ns, name string, desired kube.Object) (op string, err error) {
	modified, err := withApplied(desired)
	if err != nil {
		return "prepare create", err
	}
	cur, err := c.get(ctx, m, ns, name)
	if reason(err) == "NotFound" {
		err = c.create(ctx, m, ns, modified)
		if reason(err) != "AlreadyExists" {
			return "create", err
		}
		cur, err = c.get(ctx, m, ns, name)
	}
	if err != nil {
		return "update", err
	}
	var schema *kube.Field
	if kube.Builtin(m.group) {
		schema = kube.Schema(m.group, m.kind)
	}
	merged := kube.ThreeWayMerge(schema, appliedOf(cur), modified, cur)
	if kube.Equal(merged, cur) {
		return "", nil
	}
	return "update", c.update(ctx, m, ns, name, merged)
}

// prune deletes the objects of m that carry the AddOn's hash and are not
// in want (namespace/name), unless labelled prune=false.
func (c *Client) prune(ctx context.Context, m mapping, hash string, want map[string]bool, debugID string) error {
	owned, err := c.list(ctx, m, labelHash, hash)
	if err != nil {
		return fmt.Errorf("failed to list %s for %s: %w", m.gvk, debugID, err)
	}
	var errs []string
	for _, o := range owned {
		ns, name := kube.Str(o, "metadata.namespace"), kube.Str(o, "metadata.name")
		if want[ns+"/"+name] || kube.StrMap(o, "metadata.labels")[labelPrune] == "false" {
			continue
		}
		if err := c.delete(ctx, m, ns, name); err != nil && reason(err) != "NotFound" {
			errs = append(errs, fmt.Sprintf("failed to delete %s %s for %s: %v", key(ns, name), m.gvk, debugID, err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, ", "))
	}
	return nil
}

// own puts the AddOn's owner annotations and hash label on obj.
func own(obj kube.Object, addon, hash string) {
	ann, _ := kube.Get(obj, "metadata.annotations").(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	delete(ann, annApplied)
	ann[annID], ann[annOwnerGVK], ann[annOwnerName], ann[annOwnerNS] = "", addonGVK, addon, addonNS
	kube.Set(obj, "metadata.annotations", ann)
	labels, _ := kube.Get(obj, "metadata.labels").(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[labelHash] = hash
	kube.Set(obj, "metadata.labels", labels)
}

// objectSetHash is the hash label of what an AddOn owns: SHA-1 of the set
// ID (none), the owner's GVK, name and namespace.
func objectSetHash(addon string) string {
	h := sha1.New()
	for _, s := range []string{"", addonGVK, addon, addonNS} {
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// withApplied is desired carrying its own configuration in the applied
// annotation: its JSON with long strings cut to 64 characters (merge
// keys excepted), gzipped and base64-encoded, as the apply library
// records what it applied.
func withApplied(desired kube.Object) (kube.Object, error) {
	b, err := json.Marshal(pruneApplied(desired, false))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := kube.DeepCopy(desired)
	ann, _ := kube.Get(out, "metadata.annotations").(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[annApplied] = base64.RawStdEncoding.EncodeToString(buf.Bytes())
	kube.Set(out, "metadata.annotations", ann)
	return out, nil
}

// appliedOf is the configuration an object was last applied with, from
// its applied annotation (gzipped or, as older releases wrote it, plain
// JSON); nil without one.
func appliedOf(obj kube.Object) kube.Object {
	s := kube.StrMap(obj, "metadata.annotations")[annApplied]
	if s == "" {
		return nil
	}
	b := []byte(s)
	if !strings.HasPrefix(s, "{") {
		raw, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil {
			return nil
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil
		}
	}
	var o kube.Object
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	return o
}

// listKeys are the fields an element of a list keeps whole in the
// applied annotation: the merge keys a later merge matches elements by.
var listKeys = map[string]bool{"apiVersion": true, "containerPort": true, "devicePath": true, "ip": true,
	"kind": true, "mountPath": true, "name": true, "port": true, "topologyKey": true, "type": true}

func pruneApplied(m map[string]any, inList bool) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch t := v.(type) {
		case map[string]any:
			out[k] = pruneApplied(t, false)
		case []any:
			out[k] = pruneList(t)
		case string:
			if len(t) > 64 && (!inList || !listKeys[k]) {
				t = t[:64]
			}
			out[k] = t
		default:
			out[k] = v
		}
	}
	return out
}

func pruneList(l []any) []any {
	out := make([]any, 0, len(l))
	for _, v := range l {
		switch t := v.(type) {
		case map[string]any:
			out = append(out, pruneApplied(t, true))
		case []any:
			out = append(out, pruneList(t))
		default:
			out = append(out, v)
		}
	}
	return out
}
