package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKubeConfigRefusesMissingAndUnknownFlags(t *testing.T) {
	cases := map[string][]string{
		"--config is required":                   {"kube-config", "--distro", "k3s"},
		"--distro is required":                   {"kube-config", "--config", "cluster.yaml"},
		`--distro "k0s" is not one of k3s, rke2`: {"kube-config", "--config", "cluster.yaml", "--distro", "k0s"},
		"unknown command":                        {"kube-config", "extra"},
	}
	for want, args := range cases {
		_, _, err := runCLI(t, nil, args...)
		assert.ErrorContains(t, err, want, "%v", args)
	}
}

func TestKubeConfigNamesEachControllerThatGaveNone(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "cluster.yaml")
	require.NoError(t, os.WriteFile(cluster, []byte(`apiVersion: colonel-byte.dev/v1alpha1
kind: Cluster
metadata:
  name: here
spec:
  config:
    loadbalancer: 127.0.0.1
  hosts:
    - localhost: {enabled: true}
      hostname: here
      privateAddress: 127.0.0.1
      role: controller
`), 0o600))
	out := filepath.Join(dir, "kubeconfig")
	stdout, _, err := runCLI(t, nil, "kube-config", "--config", cluster, "--distro", "rke2", "-o", out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no controller gave its admin kubeconfig:\n - here: rke2-server does not run")
	assert.Empty(t, stdout)
	assert.NoFileExists(t, out, "nothing is written on failure")
}

func TestEngineFlagsSetThePhaseOptions(t *testing.T) {
	parse := func(args ...string) (node.Options, error) {
		var f engineFlags
		fl := pflag.NewFlagSet("apply", pflag.ContinueOnError)
		f.register(fl)
		require.NoError(t, fl.Parse(args))
		var o node.Options
		return o, f.apply(&o)
	}
	o, err := parse()
	require.NoError(t, err)
	assert.Equal(t, node.Options{}, o, "both phases are off by default")

	o, err = parse("--kubeconfig-out", "k.yaml", "--label-nodes")
	require.NoError(t, err)
	assert.Equal(t, "k.yaml", o.KubeconfigOut)
	assert.True(t, o.LabelNodes)

	_, err = parse("--kubeconfig-out", "-")
	require.ErrorContains(t, err, "apply prints its summary on stdout")
	_, err = parse("--kubeconfig-out", t.TempDir())
	assert.ErrorContains(t, err, "is a directory")
}
