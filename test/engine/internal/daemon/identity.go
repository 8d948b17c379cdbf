package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
)

// identity is who this node is in the cluster.
type identity struct {
	name        string
	password    string
	ips         []string
	externalIPs []string
}

// nodeIdentity settles the node's name, password and addresses:
// node-name or the host name (plus a stable suffix with with-node-id);
// the password from /etc/rancher/node/password, made on first start and
// kept across reinstalls as the engines keep it; node-ip or the default
// route's address.
func nodeIdentity(c Config) (identity, error) {
	var id identity
	pwFile := path.Join(c.Flavor.NodeDir(), "password")
	b, err := hostfs.ReadFile(pwFile)
	switch {
	case err == nil:
		id.password = strings.TrimSpace(string(b))
	case errors.Is(err, fs.ErrNotExist):
		id.password = randomHex(16)
		if err := hostfs.WriteFile(pwFile, []byte(id.password+"\n"), 0o600); err != nil {
			return id, err
		}
	default:
		return id, err
	}
	id.name = strings.ToLower(c.NodeName)
	if id.name == "" {
		if id.name, err = hostname(); err != nil {
			return id, err
		}
	}
	if c.WithNodeID {
		sum := sha256.Sum256([]byte(id.password))
		id.name += "-" + hex.EncodeToString(sum[:])[:8]
	}
	id.ips = splitList(c.NodeIPs)
	if len(id.ips) == 0 {
		ip, err := defaultNodeIP()
		if err != nil {
			return id, err
		}
		id.ips = []string{ip}
	}
	id.externalIPs = splitList(c.NodeExternalIPs)
	return id, nil
}

// splitList flattens comma-separated list values (node-ip: "a,b").
func splitList(in []string) []string {
	var out []string
	for _, v := range in {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
