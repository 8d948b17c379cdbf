package node

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// joinSecrets are what a kubeadm node joins with: a bootstrap token, the
// CA's hash to pin it, and the key the founder's uploaded certificates are
// encrypted with. k3s and rke2 need only the cluster token.
type joinSecrets struct {
	token, caHash, certKey string
}

var certKeyLine = regexp.MustCompile(`(?m)^\s*certificateKey:\s*"?([0-9a-f]{64})"?\s*$`)

// KubeadmSecrets reads or makes the kubeadm join secrets. During a cold
// bootstrap only the certificate key exists (the founder's config carries
// it); once the founder runs, the token and CA hash come from it.
func (s *Fleet) KubeadmSecrets(ctx context.Context) (joinSecrets, error) {
	s.mu.Lock()
	sec := s.kubeadm
	s.mu.Unlock()
	if sec.token != "" {
		return sec, nil
	}
	leader := s.Leader()
	if sec.certKey == "" && leader != nil && leader.Conn != nil {
		if cfg, err := host.ReadFile(ctx, leader.Conn, s.Engine.Paths().Config); err == nil {
			if m := certKeyLine.FindSubmatch(cfg); m != nil {
				sec.certKey = string(m[1])
			}
		}
	}
	if sec.certKey == "" {
		k, err := engine.NewCertificateKey()
		if err != nil {
			return sec, err
		}
		sec.certKey = k
	}
	if !s.ColdBootstrap() {
		tok, err := leader.Conn.Sudo(ctx, s.Engine.JoinTokenCommand())
		if err != nil {
			return sec, fmt.Errorf("%s: making a join token: %w", leader, err)
		}
		sec.token = strings.TrimSpace(tok)
		ca, err := host.ReadFile(ctx, leader.Conn, s.Engine.Paths().CACert)
		if err != nil {
			return sec, fmt.Errorf("%s: reading the cluster CA: %w", leader, err)
		}
		if sec.caHash, err = engine.CACertHash(ca); err != nil {
			return sec, err
		}
		if up, ok := s.Engine.(engine.CertUploader); ok {
			if _, err := leader.Conn.Sudo(ctx, up.UploadCertsCommand()); err != nil {
				return sec, fmt.Errorf("%s: uploading control-plane certificates: %w", leader, err)
			}
		}
	}
	s.mu.Lock()
	s.kubeadm = sec
	s.mu.Unlock()
	return sec, nil
}
