package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// PlacedRecord lists what cargoship placed on a host: each file with its
// sha256, each link with where it points, and the directory each sat in
// as it resolved then. A reset removes these and only while they are
// still what was placed (docs/reset.md, "What a reset removes"). It is
// root's alone (0600, in a root-owned directory) and written whole.
const PlacedRecord = StateDir + "/placed.json"

// placedVersion is the record's format; a reader refuses another.
const placedVersion = 1

// The kinds of placed entry.
const (
	placedFile = "file"
	placedLink = "link"
)

// placedEntry is one thing cargoship placed.
type placedEntry struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	SHA256 string `json:"sha256,omitempty"` // a file's
	// Earlier are a file's previous hashes, newest first: a file staged
	// anew and not yet installed leaves the one installed before in
	// place, and that one is cargoship's too.
	Earlier []string `json:"earlier,omitempty"`
	Target  string   `json:"target,omitempty"` // where a link points
	// Dir is the path's directory as `cd -P` resolved it when placed: a
	// reset that finds it resolving elsewhere leaves the path alone.
	Dir string `json:"dir"`
}

// placedRecord is the record's document.
type placedRecord struct {
	Version int           `json:"version"`
	Placed  []placedEntry `json:"placed"`
}

// parsePlaced reads a record; an empty one holds nothing.
func parsePlaced(data []byte) (placedRecord, error) {
	rec := placedRecord{Version: placedVersion}
	if len(strings.TrimSpace(string(data))) == 0 {
		return rec, nil
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("the placement record %s: %w", PlacedRecord, err)
	}
	if rec.Version != placedVersion {
		return rec, fmt.Errorf("the placement record %s: version %d, this cargoship reads %d", PlacedRecord, rec.Version, placedVersion)
	}
	return rec, nil
}

// readPlaced is a host's record through r; ok=false when it has none
// (placed by a cargoship older than the record, or never).
func readPlaced(ctx context.Context, r host.Runner) (rec placedRecord, ok bool, err error) {
	data, ok, err := host.ReadFileIfExists(ctx, r, PlacedRecord)
	if err != nil {
		return rec, false, fmt.Errorf("reading the placement record: %w", err)
	}
	rec, err = parsePlaced(data)
	return rec, ok, err
}

// maxEarlier is how many earlier hashes an entry keeps.
const maxEarlier = 4

// merge puts each of add in the record, replacing an entry of the same
// path: what the last apply placed there is what is there. A file's
// hash it replaces is kept among its earlier ones.
func (rec placedRecord) merge(add []placedEntry) placedRecord {
	byPath := map[string]placedEntry{}
	for _, e := range slices.Concat(rec.Placed, add) {
		if old, ok := byPath[e.Path]; ok && old.Kind == placedFile && e.Kind == placedFile {
			e.Earlier = earlier(e.SHA256, old)
		}
		byPath[e.Path] = e
	}
	out := placedRecord{Version: placedVersion}
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		out.Placed = append(out.Placed, byPath[p])
	}
	return out
}

// earlier are the hashes before sum: old's, then its earlier ones, less
// sum itself, at most maxEarlier.
func earlier(sum string, old placedEntry) []string {
	var out []string
	for _, h := range append([]string{old.SHA256}, old.Earlier...) {
		if h != "" && h != sum && !slices.Contains(out, h) && len(out) < maxEarlier {
			out = append(out, h)
		}
	}
	return out
}

// hashes are every hash a file of e may have: its own and its earlier.
func (e placedEntry) hashes() []string { return append([]string{e.SHA256}, e.Earlier...) }

// recordable says a path can go in the record and come back out of the
// line protocols that read it: absolute, clean, one line, not a root.
func recordable(p string) bool {
	return path.IsAbs(p) && path.Clean(p) == p && p != "/" && !strings.ContainsAny(p, "\n\x00")
}

// recordsOf are the record entries placing pls makes, before their
// directories are resolved: each file, and each of its links. A
// placement marked Keep, or without a hash, is not recorded.
func recordsOf(pls []Placement) []placedEntry {
	var out []placedEntry
	for _, pl := range pls {
		if pl.Keep || pl.SHA256 == "" || !recordable(pl.Target) {
			continue
		}
		out = append(out, placedEntry{Path: pl.Target, Kind: placedFile, SHA256: pl.SHA256})
		for _, l := range pl.Symlinks {
			if recordable(l) {
				out = append(out, placedEntry{Path: l, Kind: placedLink, Target: pl.Target})
			}
		}
	}
	return out
}

// entryDirs are the directories of entries, once each, sorted.
func entryDirs(entries []placedEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, path.Dir(e.Path))
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// probeScript prints, for each directory argument after $1, where
// `cd -P` takes it (links resolved), one line each, empty when it does
// not exist or resolves to a name a line cannot hold; then the record
// $1, when there is one, at most $2 bytes.
const probeScript = `rec=$1 limit=$2; shift 2
nl='
'
for d in "$@"; do
  r=$(cd -P -- "$d" 2>/dev/null && pwd -P) || r=
  case $r in *"$nl"*) r= ;; esac
  printf '%s\n' "$r"
done
[ ! -e "$rec" ] || exec head -c "$limit" -- "$rec"`

// recordLimit bounds the record as read back: a host must not fill this
// machine's memory with one.
const recordLimit = host.MaxReadFile

// probeCommand is probeScript for dirs.
func probeCommand(dirs []string) string {
	return host.Script(probeScript, append([]string{PlacedRecord, strconv.FormatInt(recordLimit+1, 10)}, dirs...)...)
}

// probe reads, in one command through r, where each of dirs resolves (a
// directory that does not is left out) and the record.
func probe(ctx context.Context, r host.Runner, dirs []string) (map[string]string, placedRecord, error) {
	out, err := r.Sudo(ctx, probeCommand(dirs), host.WithMaxOutput(host.MaxOutput+recordLimit+1))
	if err != nil {
		return nil, placedRecord{}, fmt.Errorf("reading the placement record: %w", err)
	}
	resolved := map[string]string{}
	for _, d := range dirs {
		line, rest, ok := strings.Cut(out, "\n")
		if !ok {
			return nil, placedRecord{}, fmt.Errorf("reading the placement record: no line for %s", d)
		}
		if line != "" {
			resolved[d] = line
		}
		out = rest
	}
	if int64(len(out)) > recordLimit {
		return nil, placedRecord{}, fmt.Errorf("reading the placement record: %s is larger than %d bytes", PlacedRecord, recordLimit)
	}
	rec, err := parsePlaced([]byte(out))
	return resolved, rec, err
}

// recordProbes are the record's reads for host.Prefetch: on a converged
// host PlaceAll then finds the record already right without a round trip.
func recordProbes(pls []Placement) []string {
	entries := recordsOf(pls)
	if len(entries) == 0 {
		return nil
	}
	return []string{probeCommand(entryDirs(entries))}
}

// recordPlaced adds what placing pls put on a host to its record through r,
// written (0600, atomically) only when it changes. An entry whose
// directory does not resolve is not recorded: a reset then leaves it.
func recordPlaced(ctx context.Context, r host.Runner, pls []Placement) error {
	entries := recordsOf(pls)
	if len(entries) == 0 {
		return nil
	}
	dirs, rec, err := probe(ctx, r, entryDirs(entries))
	if err != nil {
		return err
	}
	var add []placedEntry
	for _, e := range entries {
		if e.Dir = dirs[path.Dir(e.Path)]; e.Dir != "" {
			add = append(add, e)
		}
	}
	had, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec.merge(add), "", "  ")
	if err != nil {
		return err
	}
	if bytes.Equal(had, data) {
		return nil
	}
	if _, err := host.WriteFile(ctx, r, PlacedRecord, append(data, '\n'), 0o600, ""); err != nil {
		return fmt.Errorf("recording what was placed: %w", err)
	}
	return nil
}
