package daemon

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
)

// kubeconfigTemplate is the admin kubeconfig as k3s writes it: cluster,
// context and user all named "default", certificates inline (K-KCFG).
const kubeconfigTemplate = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: %s
    server: %s
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: %s
    client-key-data: %s
`

// writeKubeconfig writes the admin kubeconfig with the mode from
// write-kubeconfig-mode (default 0600) and group from
// write-kubeconfig-group.
func writeKubeconfig(path, server string, caPEM, certPEM, keyPEM []byte, mode, group string) error {
	perm := os.FileMode(0o600)
	if mode != "" {
		m, err := strconv.ParseUint(mode, 8, 32)
		if err != nil {
			return fmt.Errorf("invalid write-kubeconfig-mode %q: %w", mode, err)
		}
		perm = os.FileMode(m)
	}
	b64 := base64.StdEncoding.EncodeToString
	content := fmt.Sprintf(kubeconfigTemplate, b64(caPEM), server, b64(leafOnly(certPEM)), b64(keyPEM))
	if err := hostfs.WriteFile(path, []byte(content), perm); err != nil {
		return err
	}
	if group == "" {
		return nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		if g, err = user.LookupGroupId(group); err != nil {
			return fmt.Errorf("write-kubeconfig-group %q: %w", group, err)
		}
	}
	gid, _ := strconv.Atoi(g.Gid)
	return os.Chown(hostfs.Path(path), -1, gid)
}
