package provider

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// TestInstallFromFilesystemMirror installs the provider the way
// docs/provider.md tells an offline user to: built from
// cmd/terraform-provider-cargoship, laid into a filesystem mirror, found by
// `terraform init` with no registry, and example/tofu validates against its
// schema.
func TestInstallFromFilesystemMirror(t *testing.T) {
	testtier.Slow(t, "builds the provider and runs terraform init and validate on a filesystem mirror")
	useTerraformBinary(t)
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror")
	const version = "0.1.0"
	target := runtime.GOOS + "_" + runtime.GOARCH
	var first string
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		bin := filepath.Join(mirror, host, "colonel-byte", "cargoship", version, target, "terraform-provider-cargoship_v"+version)
		if first == "" {
			build := exec.Command("go", "build", "-o", bin,
				"-ldflags", "-X github.com/colonel-byte/cargoship/pkg/version.Version="+version,
				"github.com/colonel-byte/cargoship/cmd/terraform-provider-cargoship")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("building the provider: %v\n%s", err, out)
			}
			first = bin
			continue
		}
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(first, bin); err != nil {
			t.Fatal(err)
		}
	}
	cliConfig := filepath.Join(dir, "terraformrc")
	rc := "provider_installation {\n  filesystem_mirror {\n    path = \"" + mirror + "\"\n  }\n}\n"
	if err := os.WriteFile(cliConfig, []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "example")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../../../example/tofu/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	tfRun := func(args ...string) string {
		cmd := exec.Command(tf, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(tf), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tfRun("init", "-input=false", "-no-color")
	tfRun("validate", "-no-color")
	var schema struct {
		ProviderSchemas map[string]struct {
			ResourceSchemas map[string]struct {
				Block struct {
					Attributes map[string]json.RawMessage `json:"attributes"`
				} `json:"block"`
			} `json:"resource_schemas"`
		} `json:"provider_schemas"`
	}
	if err := json.Unmarshal([]byte(tfRun("providers", "schema", "-json")), &schema); err != nil {
		t.Fatal(err)
	}
	var attrs map[string]json.RawMessage
	for addr, p := range schema.ProviderSchemas {
		if strings.HasSuffix(addr, "colonel-byte/cargoship") {
			attrs = p.ResourceSchemas["cargoship_cluster"].Block.Attributes
		}
	}
	for _, a := range []string{"name", "load_balancer", "package", "hosts", "config", "export_kubeconfig", "label_nodes",
		"concurrency", "worker_concurrency", "timeouts", "kubeconfig", "version", "nodes"} {
		if _, ok := attrs[a]; !ok {
			t.Errorf("the installed provider's cargoship_cluster has no %s attribute", a)
		}
	}
}
