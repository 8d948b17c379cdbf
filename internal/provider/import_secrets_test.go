package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretsInventory has a registry password, a registry token and a proxy
// credential in a host's environment.
const secretsInventory = `apiVersion: colonel-byte.dev/v1alpha1
kind: Cluster
metadata:
  name: edge
spec:
  config:
    loadbalancer: 10.0.0.11
    registries:
      - name: docker.io
        mirrors: [https://mirror.example]
        auth: {user: pull, pass: PASS-0451}
      - name: quay.io
        mirrors: [https://quay-mirror.example]
        auth: {token: TOKEN-0451}
      - name: ghcr.io
        mirrors: [https://ghcr-mirror.example]
        auth: {user: pull, passEnv: GHCR_PASS}
  hosts:
    - ssh: {address: 10.0.0.11, user: root, keyPath: /keys/id}
      hostname: kc0
      role: controller
      environment: {HTTPS_PROXY: "http://u:ENV-0451@proxy:3128"}
`

// TestImportLeavesRegistrySecretsOut: an import copies no registry
// password or token into the state, says which it left out, and keeps the
// rest (passEnv, the user, the environment, which is sensitive).
func TestImportLeavesRegistrySecretsOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(file, []byte(secretsInventory), 0o600); err != nil {
		t.Fatal(err)
	}
	m, diags := importInventory(context.Background(), file)
	if diags.HasError() {
		t.Fatal(diags)
	}
	config := m.Config.ValueString()
	for _, secret := range []string{"PASS-0451", "TOKEN-0451"} {
		if strings.Contains(config, secret) {
			t.Errorf("the imported config holds %s:\n%s", secret, config)
		}
	}
	for _, kept := range []string{"passEnv: GHCR_PASS", "user: pull", "quay.io"} {
		if !strings.Contains(config, kept) {
			t.Errorf("the imported config lost %q:\n%s", kept, config)
		}
	}
	if strings.Contains(config, "auth: {}") {
		t.Errorf("an emptied auth is left in:\n%s", config)
	}
	var warning string
	for _, d := range diags.Warnings() {
		warning += d.Detail()
	}
	for _, field := range []string{"registries[0].auth.pass", "registries[1].auth.token"} {
		if !strings.Contains(warning, field) {
			t.Errorf("no warning names %s: %v", field, diags)
		}
	}
	hosts, _, _ := hostsOf(context.Background(), m.Hosts)
	if env := hosts["kc0"].Environment.String(); !strings.Contains(env, "ENV-0451") {
		t.Errorf("the environment was not imported: %s", env)
	}
}
