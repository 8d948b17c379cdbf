package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
)

func writeConfig(t *testing.T, root, path, content string) {
	t.Helper()
	p := filepath.Join(root, path)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
}

// parse reads config and args as the engine would for cmd.
func parse(t *testing.T, fl flavor.Flavor, cmd string, args ...string) Values {
	t.Helper()
	table := flagsFor(fl, cmd)
	cfg, err := configArgs(fl, table, args)
	require.NoError(t, err)
	v, err := parseFlags(fl, table, append(cfg, args...))
	require.NoError(t, err)
	return v
}

// docs/reference/engines.md 3.1: the main file, then config.yaml.d/*.yaml and
// *.yml in name order; the last value wins, key+ appends, lists become
// repeated flags, booleans true/false.
func TestConfigFileAndDropInsMergeAsTheEnginesDo(t *testing.T) {
	root := t.TempDir()
	t.Setenv(hostfs.RootEnv, root)
	writeConfig(t, root, "/etc/rancher/k3s/config.yaml", "node-name: first\nnode-label: [a=1, b=2]\ncluster-init: true\ntls-san: [one]\n")
	writeConfig(t, root, "/etc/rancher/k3s/config.yaml.d/20-more.yml", "node-label+: [c=3]\ntls-san: [two]\n")
	writeConfig(t, root, "/etc/rancher/k3s/config.yaml.d/10-name.yaml", "node-name: second\n")
	writeConfig(t, root, "/etc/rancher/k3s/config.yaml.d/ignored.txt", "node-name: never\n")

	v := parse(t, flavor.K3s, "server")
	assert.Equal(t, "second", v.String("node-name"))
	assert.Equal(t, []string{"a=1", "b=2", "c=3"}, v.Strings("node-label"))
	assert.Equal(t, []string{"two"}, v.Strings("tls-san"), "a later file without + replaces the list")
	assert.True(t, v.Bool("cluster-init"))
}

// Real flags win over the file; a repeated CLI flag replaces the whole
// list from the file.
func TestCommandLineFlagsWinOverConfig(t *testing.T) {
	root := t.TempDir()
	t.Setenv(hostfs.RootEnv, root)
	writeConfig(t, root, "/etc/rancher/k3s/config.yaml", "node-name: from-file\nnode-label: [a=1]\n")
	v := parse(t, flavor.K3s, "agent", "--node-name", "from-cli", "--node-label=b=2")
	assert.Equal(t, "from-cli", v.String("node-name"))
	assert.Equal(t, []string{"b=2"}, v.Strings("node-label"))
}

// A key the command does not define is skipped (with the engine's
// warning): server-only keys in an agent's file, cluster-init for rke2.
func TestUnknownKeysAreSkipped(t *testing.T) {
	root := t.TempDir()
	t.Setenv(hostfs.RootEnv, root)
	writeConfig(t, root, "/etc/rancher/k3s/config.yaml", "tls-san: [x]\nno-such-flag: 1\nnode-name: a\n")
	v := parse(t, flavor.K3s, "agent")
	assert.False(t, v.IsSet("tls-san"))
	assert.Equal(t, "a", v.String("node-name"))

	writeConfig(t, root, "/etc/rancher/rke2/config.yaml", "cluster-init: true\ncni: [cilium]\n")
	v = parse(t, flavor.RKE2, "server")
	assert.False(t, v.IsSet("cluster-init"))
	assert.Equal(t, []string{"cilium"}, v.Strings("cni"))
}

// --config, then $K3S_CONFIG_FILE, name the file; an explicit file that
// does not exist is an error, a missing default is not.
func TestConfigFileLocation(t *testing.T) {
	root := t.TempDir()
	t.Setenv(hostfs.RootEnv, root)
	writeConfig(t, root, "/srv/other.yaml", "node-name: other\n")
	assert.Equal(t, "other", parse(t, flavor.K3s, "agent", "-c", "/srv/other.yaml").String("node-name"))
	t.Setenv("K3S_CONFIG_FILE", "/srv/other.yaml")
	assert.Equal(t, "other", parse(t, flavor.K3s, "agent").String("node-name"))

	t.Setenv("K3S_CONFIG_FILE", "/srv/missing.yaml")
	_, err := configArgs(flavor.K3s, flagsFor(flavor.K3s, "agent"), nil)
	require.Error(t, err)
	t.Setenv("K3S_CONFIG_FILE", "")
	_, err = configArgs(flavor.K3s, flagsFor(flavor.K3s, "agent"), nil)
	require.NoError(t, err)
}

// Environment variables fill flags nothing else set (K3S_TOKEN, K3S_URL,
// RKE2_TOKEN ...), lists comma-separated.
func TestEnvironmentVariablesFillUnsetFlags(t *testing.T) {
	t.Setenv(hostfs.RootEnv, t.TempDir())
	t.Setenv("K3S_URL", "https://10.0.0.1:6443")
	t.Setenv("K3S_TOKEN", "from-env")
	v := parse(t, flavor.K3s, "agent", "--token", "from-flag")
	assert.Equal(t, "https://10.0.0.1:6443", v.String("server"))
	assert.Equal(t, "from-flag", v.String("token"))
	t.Setenv("RKE2_TOKEN", "rke2-env")
	assert.Equal(t, "rke2-env", parse(t, flavor.RKE2, "agent").String("token"))
}

func TestFlagParsing(t *testing.T) {
	table := flagsFor(flavor.K3s, "server")
	v, err := parseFlags(flavor.K3s, table, []string{"-t", "tok", "--cluster-init", "--selinux=false", "-node-ip", "1.2.3.4", "--node-ip=5.6.7.8"})
	require.NoError(t, err)
	assert.Equal(t, "tok", v.String("token"))
	assert.True(t, v.Bool("cluster-init"))
	assert.False(t, v.Bool("selinux"))
	assert.Equal(t, []string{"1.2.3.4", "5.6.7.8"}, v.Strings("node-ip"))

	_, err = parseFlags(flavor.K3s, table, []string{"--bogus"})
	require.EqualError(t, err, "flag provided but not defined: -bogus")
	_, err = parseFlags(flavor.K3s, flagsFor(flavor.K3s, "agent"), []string{"--tls-san=x"})
	require.Error(t, err, "a server flag on the agent command line")
	_, err = parseFlags(flavor.RKE2, flagsFor(flavor.RKE2, "server"), []string{"--cluster-init"})
	require.Error(t, err, "rke2 has no cluster-init")
}
