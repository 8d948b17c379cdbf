package image

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// RegistryOverride pulls images named under From through To instead: a
// mirror of From. The image keeps its original name in the archive, the
// package and on the hosts; only where its bytes come from changes.
type RegistryOverride struct {
	// From is a registry ("docker.io") or a registry and repository prefix
	// ("docker.io/rancher"), as a normalised reference starts.
	From string
	// To replaces From: a registry ("mirror.internal:5000"), optionally
	// with a path ("mirror.internal:5000/dockerhub").
	To string
}

// String is the override as written on the command line.
func (o RegistryOverride) String() string { return o.From + "=" + o.To }

// ParseRegistryOverrides reads "registry=replacement" items
// (docker.io=mirror.internal:5000), as --registry-override and the
// registry_override setting give them. Docker Hub's other names
// (index.docker.io, registry-1.docker.io) mean docker.io. An item that does
// not parse is an error naming it; a From given twice is refused, since
// which one wins would be a guess.
func ParseRegistryOverrides(items []string) ([]RegistryOverride, error) {
	var out []RegistryOverride
	for _, it := range items {
		from, to, ok := strings.Cut(strings.TrimSpace(it), "=")
		from, to = strings.TrimSuffix(strings.TrimSpace(from), "/"), strings.TrimSuffix(strings.TrimSpace(to), "/")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("%q: want registry=replacement, like docker.io=mirror.internal:5000", it)
		}
		from = canonicalRegistry(from)
		if err := checkOverrideSide(from); err != nil {
			return nil, fmt.Errorf("%q: %s: %w", it, from, err)
		}
		if err := checkOverrideSide(to); err != nil {
			return nil, fmt.Errorf("%q: %s: %w", it, to, err)
		}
		if i := slices.IndexFunc(out, func(o RegistryOverride) bool { return o.From == from }); i >= 0 {
			return nil, fmt.Errorf("%q: %s is already overridden (%s)", it, from, out[i])
		}
		out = append(out, RegistryOverride{From: from, To: to})
	}
	return out, nil
}

// canonicalRegistry spells Docker Hub's registry as normalised references
// do, so "index.docker.io=..." matches "docker.io/library/busybox".
func canonicalRegistry(s string) string {
	host, rest, _ := strings.Cut(s, "/")
	switch host {
	case name.DefaultRegistry, "registry-1.docker.io":
		host = dockerHub
	}
	if rest == "" {
		return host
	}
	return host + "/" + rest
}

// checkOverrideSide checks a side is a registry host with an optional
// repository path, by parsing a reference made of it.
func checkOverrideSide(s string) error {
	if strings.ContainsAny(s, "@=") || strings.Contains(s, "://") {
		return fmt.Errorf("not a registry name (no scheme, tag or digest)")
	}
	if _, err := name.NewRepository(s + "/x"); err != nil {
		return fmt.Errorf("not a registry name: %w", err)
	}
	host, _, _ := strings.Cut(s, "/")
	if !strings.ContainsAny(host, ".:") && host != "localhost" {
		return fmt.Errorf("%q is not a registry host (a registry has a dot or a port in its name, or is localhost)", host)
	}
	return nil
}

// rewrite returns the reference to pull normalized from, and the override
// used: the longest From that normalized starts with at a path boundary.
func rewrite(normalized string, overrides []RegistryOverride) (string, *RegistryOverride) {
	var best *RegistryOverride
	for i, o := range overrides {
		if !underPrefix(normalized, o.From) {
			continue
		}
		if best == nil || len(o.From) > len(best.From) {
			best = &overrides[i]
		}
	}
	if best == nil {
		return normalized, nil
	}
	return best.To + strings.TrimPrefix(normalized, best.From), best
}

// underPrefix reports whether ref is named under from: a registry (no '/')
// must be followed by '/', so "localhost" does not match
// "localhost:5000/x"; a repository prefix also by ':' or '@', so
// "docker.io/rancher/pause" matches "docker.io/rancher/pause:3.6".
func underPrefix(ref, from string) bool {
	rest, ok := strings.CutPrefix(ref, from)
	if !ok || rest == "" {
		return false
	}
	if !strings.Contains(from, "/") {
		return rest[0] == '/'
	}
	return strings.ContainsRune("/:@", rune(rest[0]))
}
