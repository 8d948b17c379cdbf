package phase

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// Leader is the controller the cluster is founded or driven through: the
// first controller already running the engine, else the first controller
// of the inventory. A controller that rejoins does not take the role back.
func (s *State) Leader() *Host {
	if h := s.kubectlHost(); h != nil {
		return h
	}
	if cs := s.Hosts.Controllers(); len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// ColdBootstrap says no controller runs the engine yet: the leader founds
// the cluster and everyone joins through it.
func (s *State) ColdBootstrap() bool { return s.kubectlHost() == nil }

// effectiveSpec is a host's inventory entry with what facts discovered
// filled in, so rendering never sees an empty node name or address.
func (h *Host) effectiveSpec() *v1alpha1.Host {
	c := *h.Spec
	c.Hostname = h.NodeName()
	if c.PrivateAddress == "" {
		c.PrivateAddress = h.Facts.PrivateAddress
	}
	if c.PrivateInterface == "" {
		c.PrivateInterface = h.Facts.PrivateInterface
	}
	return &c
}

// effectiveCluster is the inventory with every host's effective spec.
func (s *State) effectiveCluster() *v1alpha1.Cluster {
	c := *s.Cluster
	c.Spec.Hosts = make([]v1alpha1.Host, len(s.Hosts))
	for i, h := range s.Hosts {
		c.Spec.Hosts[i] = *h.effectiveSpec()
	}
	return &c
}

// readClusterToken finds the cluster token without changing anything: the
// engine's own server token on a running leader, else the token file an
// earlier cargoship run wrote there. "" means none exists yet.
func (s *State) readClusterToken(ctx context.Context) (string, error) {
	leader := s.Leader()
	if leader == nil {
		return "", nil
	}
	for _, p := range []string{s.Engine.ServerTokenPath(), s.Engine.Paths().TokenFile} {
		if p == "" {
			continue
		}
		data, err := host.ReadFile(ctx, leader.Conn, p)
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

// registryPasswords resolves the passEnv of every cluster registry.
func (s *State) registryPasswords() (map[string]string, error) {
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

func (s *State) getenv(k string) string {
	if s.Options.LookupEnv == nil {
		return ""
	}
	v, _ := s.Options.LookupEnv(k)
	return v
}
