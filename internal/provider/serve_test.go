package provider

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// terraformBinary is the Terraform (or OpenTofu) binary the tests drive,
// found as test/e2e/provider finds it; "" when there is none.
func terraformBinary() string {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// serveInProcess serves the provider from this test process, as
// terraform-plugin-testing does, and returns the TF_REATTACH_PROVIDERS
// value that points Terraform at it: no binary to build or install.
func serveInProcess(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig)
	closed := make(chan struct{})
	server, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := tf6server.Serve(Address, func() tfprotov6.ProviderServer { return server },
			tf6server.WithDebug(ctx, reattach, closed), tf6server.WithoutLogStderrOverride(),
			// the provider's log goes where TF_LOG and TF_LOG_PATH say, as
			// under terraform-plugin-testing, not into the test's output
			tf6server.WithLoggingSink(t), tf6server.WithGoPluginLogger(hclog.NewNullLogger()))
		if err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	var c *plugin.ReattachConfig
	select {
	case c = <-reattach:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider did not start serving")
	}
	entry := map[string]any{
		"Protocol": string(c.Protocol), "ProtocolVersion": c.ProtocolVersion, "Pid": c.Pid, "Test": true,
		"Addr": map[string]string{"Network": c.Addr.Network(), "String": c.Addr.String()},
	}
	// Terraform looks the provider up under either registry's name.
	all := map[string]any{}
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		all[host+"/colonel-byte/cargoship"] = entry
	}
	out, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// terraformIn runs the binary in dir against the in-process provider, with
// no CLI configuration of the machine's and no network, and returns its
// combined output, as a terminal or a CI log would show it.
func terraformIn(t *testing.T, tf, dir, reattach string, args ...string) (string, error) {
	t.Helper()
	rc := filepath.Join(dir, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tf, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_REATTACH_PROVIDERS="+reattach, "TF_CLI_CONFIG_FILE="+rc,
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), &runError{args: strings.Join(args, " "), err: err}
	}
	return string(out), nil
}

type runError struct {
	args string
	err  error
}

func (e *runError) Error() string { return "terraform " + e.args + ": " + e.err.Error() }
