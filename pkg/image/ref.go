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
	return reference{ref: ref, normalized: out}, nil
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
