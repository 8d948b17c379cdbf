package cluster

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A definition version is reported by the engine with a plus where the
// definition has a hyphen; the upgrade walk compares nodes against it.
func TestBuiltVersion(t *testing.T) {
	assert.Equal(t, "v1.35.3+k3s1", builtVersion("1.35.3-k3s1"))
	assert.Equal(t, "v1.35.4+rke2r1", builtVersion("1.35.4-rke2r1"))
}

// The package knobs: an upgrade package needs the package it upgrades, and
// a path that is not there is refused before any host is touched.
func TestUserPackages(t *testing.T) {
	t.Setenv(envPackage, "")
	t.Setenv(envUpgradePackage, "")
	pkg, up, err := userPackages()
	require.NoError(t, err)
	assert.Empty(t, pkg+up, "unset: the suite builds its own")

	t.Setenv(envUpgradePackage, "/nowhere/new.tar.zst")
	_, _, err = userPackages()
	require.Error(t, err)
	assert.Contains(t, err.Error(), envPackage)

	t.Setenv(envPackage, "build/pkg.tar.zst")
	_, _, err = userPackages()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "absolute path")

	t.Setenv(envPackage, filepath.Join(t.TempDir(), "missing.tar.zst"))
	t.Setenv(envUpgradePackage, "")
	_, _, err = userPackages()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.tar.zst")
}
