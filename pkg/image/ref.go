package image

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// dockerHub is how references name Docker Hub; go-containerregistry spells
// it index.docker.io.
const dockerHub = "docker.io"

// reference is a parsed image reference and its normalised form.
type reference struct {
	ref        name.Reference // what to pull: the digest when one is given
	normalized string         // registry/repository[:tag][@digest]
	// pull is where the bytes come from: ref, or ref rewritten by a
	// registry override. Everything recorded (archive names, the package,
	// messages about the image) uses normalized, the original name.
	pull name.Reference
	// via is the override pull goes through, or nil.
	via *RegistryOverride
}

// NormalizeRef returns the fully qualified form of an image reference:
// "busybox" is "docker.io/library/busybox:latest", and a tag given together
// with a digest is kept ("repo:tag@sha256:...").
func NormalizeRef(s string) (string, error) {
	r, err := parseRef(s, false)
	if err != nil {
		return "", err
	}
	return r.normalized, nil
}

func parseRef(s string, insecure bool) (reference, error) {
	s = strings.TrimSpace(s)
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(s, opts...)
	if err != nil {
		return reference{}, fmt.Errorf("image reference %q: %w", s, err)
	}
	repo := ref.Context()
	registry := repo.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = dockerHub
	}
	out := registry + "/" + repo.RepositoryStr()
	switch r := ref.(type) {
	case name.Tag:
		out += ":" + r.TagStr()
	case name.Digest:
		if tag := explicitTag(s); tag != "" {
			out += ":" + tag
		}
		out += "@" + r.DigestStr()
	}
	return reference{ref: ref, normalized: out, pull: ref}, nil
}

// withOverride points r's pull at the mirror an override names, if any.
func (r reference) withOverride(overrides []RegistryOverride, insecure bool) (reference, error) {
	target, via := rewrite(r.normalized, overrides)
	if via == nil {
		return r, nil
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	pull, err := name.ParseReference(target, opts...)
	if err != nil {
		return reference{}, fmt.Errorf("image %s: registry override %s gives %q: %w", r.normalized, via, target, err)
	}
	r.pull, r.via = pull, via
	return r, nil
}

// pullRegistry names where r is pulled from, for messages.
func (r reference) pullRegistry() string {
	if r.via != nil {
		return r.pull.Context().RegistryStr() + " (registry override " + r.via.String() + ")"
	}
	return r.pull.Context().RegistryStr()
}

// explicitTag returns the tag written before an "@digest", if any; the
// parser drops it, but it names the image for people and for the engine.
func explicitTag(s string) string {
	base, _, _ := strings.Cut(s, "@")
	last := base[strings.LastIndex(base, "/")+1:]
	_, tag, ok := strings.Cut(last, ":")
	if !ok {
		return ""
	}
	return tag
}
