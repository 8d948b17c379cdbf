//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/colonel-byte/cargoship/hack/release"
	"github.com/colonel-byte/cargoship/internal/repo"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// releaseKeyEnv names the private key that signs a release's checksums.txt.
const releaseKeyEnv = "CARGOSHIP_RELEASE_KEY"

// Release builds a snapshot release into build/release with goreleaser, offline: archives, checksums.txt and its signature, SBOMs, completions, man pages (docs/release.md). CARGOSHIP_RELEASE_KEY names the signing key; without it a local key in build/release-key signs.
func Release(ctx context.Context) error {
	root, err := repo.Root()
	if err != nil {
		return err
	}
	key := os.Getenv(releaseKeyEnv)
	if key == "" {
		if key, err = localReleaseKey(root); err != nil {
			return err
		}
	}
	dist := filepath.Join(root, "build", "release")
	if err := release.Build(ctx, release.Options{Root: root, Dist: dist, Key: key}); err != nil {
		return err
	}
	fmt.Printf("release in %s, checksums.txt signed with %s (public key: %s)\n", dist, key, filepath.Join(dist, release.PublicKeyName))
	return nil
}

// localReleaseKey is build/release-key/cargoship.key, made on first use: a
// snapshot is signed like a release, with a key nobody else trusts.
func localReleaseKey(root string) (string, error) {
	dir := filepath.Join(root, "build", "release-key")
	priv, pub := filepath.Join(dir, pkgfile.PrivateKeyFile), filepath.Join(dir, pkgfile.PublicKeyFile)
	if _, err := os.Stat(priv); err == nil {
		return priv, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	_, k, err := pkgfile.GenerateKeyPair()
	if err != nil {
		return "", err
	}
	if err := pkgfile.WriteKeyPair(priv, pub, k, false); err != nil {
		return "", err
	}
	fmt.Printf("%s is unset: made a local signing key %s\n", releaseKeyEnv, priv)
	return priv, nil
}
