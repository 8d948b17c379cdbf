package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// ReadClusterToken finds the cluster token without changing anything: the
// engine's own server token on a running leader, else the token file an
// earlier cargoship run wrote there. "" means none exists yet.
func (s *Fleet) ReadClusterToken(ctx context.Context) (string, error) {
	leader := s.Leader()
	if leader == nil {
		return "", nil
	}
	var paths, reads []string
	for _, p := range []string{s.Engine.ServerTokenPath(), s.Engine.Paths().TokenFile} {
		if p != "" {
			paths, reads = append(paths, p), append(reads, host.ReadFileCommand(p))
		}
	}
	conn := host.Prefetch(ctx, leader.Conn, reads) // both in one round trip
	for _, p := range paths {
		data, err := host.ReadFile(ctx, conn, p)
		if err == nil {
			if t := strings.TrimSpace(string(data)); t != "" {
				return t, nil
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: reading the cluster token: %w", leader, err)
		}
	}
	return "", nil
}

// newToken makes a cluster token for a cold bootstrap: 32 random bytes.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// RegistryPasswords resolves the passEnv of every cluster registry.
func (s *Fleet) RegistryPasswords() (map[string]string, error) {
	out := map[string]string{}
	for i, r := range s.Cluster.Spec.Config.Registries {
		if r.Auth == nil || r.Auth.PassEnv == "" {
			continue
		}
		v := s.getenv(r.Auth.PassEnv)
		if v == "" {
			return nil, fmt.Errorf("spec.config.registries[%d].auth.passEnv names %s, which is not set", i, r.Auth.PassEnv)
		}
		out[r.Name] = v
	}
	return out, nil
}

func (s *Fleet) getenv(k string) string {
	if s.Options.LookupEnv == nil {
		return ""
	}
	v, _ := s.Options.LookupEnv(k)
	return v
}
