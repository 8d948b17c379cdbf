package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretsConfig is a cluster whose config and environment carry every
// kind of secret the provider takes inline. The package comes from a
// terraform_data output, unknown until apply, so the plan checks the
// document but neither reads a package nor dry-runs on hosts: it needs
// no fleet.
const secretsConfig = `
terraform {
  required_providers {
    cargoship = { source = "colonel-byte/cargoship" }
  }
}

provider "cargoship" {}

resource "terraform_data" "package" {
  input = "/srv/carry/cargoship.tar.zst"
}

resource "cargoship_cluster" "fleet" {
  name          = "secrets"
  load_balancer = "10.0.0.11"
  package       = terraform_data.package.output
  config = yamlencode({
    registries = [
      { name = "docker.io", mirrors = ["https://mirror.example:5000"], auth = { user = "pull", pass = "REGISTRY-PASS-0451" } },
      { name = "quay.io", mirrors = ["https://quay-mirror.example"], auth = { token = "REGISTRY-TOKEN-0451" } },
      { name = "ghcr.io", proxy = { url = "https://proxyuser:PROXY-URL-PASS-0451@ghcr-proxy.example" } },
    ]
  })
  hosts = {
    kc0 = {
      address     = "10.0.0.11"
      role        = "controller"
      environment = { HTTPS_PROXY = "http://proxyuser:ENV-PROXY-PASS-0451@proxy.example:3128" }
    }
  }
}
`

// TestPlanShowsNoSecret: a plan as a terminal or CI log shows it holds no
// registry password or token, and no proxy credential, from config or a
// host's environment.
func TestPlanShowsNoSecret(t *testing.T) {
	tf := terraformBinary()
	if tf == "" {
		t.Skip("no terraform or tofu on PATH (or TF_ACC_TERRAFORM_PATH)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(secretsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	reattach := serveInProcess(t)
	if out, err := terraformIn(t, tf, dir, reattach, "init", "-input=false", "-no-color"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := terraformIn(t, tf, dir, reattach, "plan", "-input=false", "-no-color")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "cargoship_cluster.fleet will be created") {
		t.Fatalf("the plan does not create the cluster:\n%s", out)
	}
	for _, secret := range []string{"REGISTRY-PASS-0451", "REGISTRY-TOKEN-0451", "PROXY-URL-PASS-0451", "ENV-PROXY-PASS-0451"} {
		if strings.Contains(out, secret) {
			t.Errorf("the plan shows %s:\n%s", secret, out)
		}
	}
	if strings.Count(out, "(sensitive value)") < 2 {
		t.Errorf("the plan does not mark config and environment sensitive:\n%s", out)
	}
}
