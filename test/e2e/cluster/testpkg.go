package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/e2e/e2eutil"
)

// testPackage is the package a walk applies and what the assertions may
// know about it. Everything in it is read from the package file (its
// manifest and index), so the walks assert the same way on the suite's
// test package and on a package a user built (CARGOSHIP_E2E_PACKAGE):
// paths from the index, the engine's version from the manifest, units and
// config paths from pkg/engine for the manifest's spec.type.
type testPackage struct {
	Path string
	// Version is the definition's spec.version (1.35.3-k3s1); Built is
	// that release as the engine reports it (v1.35.3+k3s1).
	Version, Built string
	// Distro names the engine (spec.type); its versions are the suite's
	// own and mean nothing for a user's package.
	Distro e2eutil.Distro
	// Entries is the package's index.
	Entries []pkgfile.Entry
}

// builtVersion is a definition version as k3s and rke2 report it: the
// release's build metadata after a plus, where a definition (a Debian-
// and path-safe name) has a hyphen: 1.35.3-k3s1 is v1.35.3+k3s1.
func builtVersion(version string) string {
	return "v" + strings.Replace(version, "-", "+", 1)
}

// openPackage reads a package file the walks apply, verifying it as apply
// does.
func openPackage(t testing.TB, path string) *testPackage {
	t.Helper()
	p, err := pkgfile.Open(path, pkgfile.OpenOptions{})
	if err != nil {
		t.Fatalf("the package %s: %v", path, err)
	}
	defer func() { _ = p.Close() }()
	d := p.Distro.Spec
	return &testPackage{
		Path: path, Version: d.Version, Built: builtVersion(d.Version),
		Distro:  e2eutil.Distro{Name: d.Type, Version: d.Version, Built: builtVersion(d.Version)},
		Entries: p.Entries(),
	}
}

// userPackages are CARGOSHIP_E2E_PACKAGE and CARGOSHIP_E2E_UPGRADE_PACKAGE:
// "" when the suite builds its own.
func userPackages() (pkg, upgrade string, err error) {
	pkg, upgrade = os.Getenv(envPackage), os.Getenv(envUpgradePackage)
	if upgrade != "" && pkg == "" {
		return "", "", fmt.Errorf("%s is set without %s: the upgrade walk moves the cluster %s installed", envUpgradePackage, envPackage, envPackage)
	}
	for _, p := range []string{pkg, upgrade} {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			// go test runs the suite in its own directory: a relative path
			// would name a file under test/e2e/cluster.
			return "", "", fmt.Errorf("%s: give the package as an absolute path (go test runs in the suite's directory)", p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("the package to walk: %w", err)
		}
	}
	return pkg, upgrade, nil
}

// userDistro is the engine of a user's package, read from its manifest,
// which must be one the walks can drive.
func userDistro(t testing.TB, path string) e2eutil.Distro {
	t.Helper()
	pkg := openPackage(t, path)
	switch pkg.Distro.Name {
	case v1alpha1.EngineK3s, v1alpha1.EngineRKE2:
	default:
		t.Fatalf("%s %s installs %s: the walks drive k3s and rke2 only (docs/e2e.md, Knobs)", envPackage, path, pkg.Distro.Name)
	}
	return pkg.Distro
}

// suitePackage is the package the cluster is installed with (upgrade
// false) or upgraded to: the user's when CARGOSHIP_E2E_PACKAGE is set, else
// the suite's test package for the run's distro.
func suitePackage(t testing.TB, w *world, upgrade bool) *testPackage {
	t.Helper()
	if w.userPkg != "" {
		path := w.userPkg
		if upgrade {
			path = w.userUpgrade
		}
		return openPackage(t, path)
	}
	return buildTestPackage(t, w.distro, upgrade)
}

// buildTestPackage builds the suite's test package for the run's distro
// (test/e2e/e2eutil, shared with the other suites): at its installed
// version, or at the one the upgrade walk moves to.
func buildTestPackage(t testing.TB, d e2eutil.Distro, upgrade bool) *testPackage {
	t.Helper()
	version, built := d.Version, d.Built
	if upgrade {
		version, built = d.Upgrade, d.UpgradeBuilt
	}
	pkg := openPackage(t, e2eutil.BuildDistroPackage(t, d, version, built).Path)
	if pkg.Built != built {
		t.Fatalf("the test package at %s reports %s, the suite expects %s", version, pkg.Built, built)
	}
	return pkg
}

func createPackage(t testing.TB, dir string) string {
	t.Helper()
	return e2eutil.CreatePackage(t, dir)
}
