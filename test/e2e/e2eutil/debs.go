package e2eutil

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
	"github.com/colonel-byte/cargoship/test/fleet/container"
)

// HostDebs are the Debian packages a fleet host lacks to install pkgs,
// downloaded from this machine's apt sources (the fleet's guests are the
// same Debian release) into a cache keyed by the fleet image's package
// list: a package carries them as an air-gapped site would, so the APT
// route installs them with every repository out of reach.
func HostDebs(t testing.TB, pkgs ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := container.EnsureImage(ctx, fleet.Options{Logger: TestLogger(t)})
	if err != nil {
		t.Fatalf("the fleet image, whose package list decides what to download: %v", err)
	}
	status := filepath.Join(img.Extra, "var/lib/dpkg/status")
	body, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(body, []byte(strings.Join(pkgs, ","))...))
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "cargoship", "debs", hex.EncodeToString(sum[:])[:12])
	if debs := globDebs(dir); len(debs) > 0 {
		return debs
	}
	// Suites in parallel lanes ask at once: each downloads into a directory
	// of its own and renames it into place whole, so none reads another's
	// half-downloaded files; a loser of the rename takes the winner's.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".part-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := os.MkdirAll(filepath.Join(tmp, "partial"), 0o755); err != nil {
		t.Fatal(err)
	}
	// apt resolves against the image's installed packages, not this
	// machine's, so exactly what a fresh host lacks comes down.
	args := []string{"-q", "-o", "Dir::State::status=" + status, "-o", "Dir::Cache::archives=" + tmp,
		"-o", "Debug::NoLocking=1", "install", "--download-only", "-y", "--no-install-recommends"}
	cmd := exec.CommandContext(ctx, "apt-get", append(args, pkgs...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("downloading %s for the fleet's hosts (needs this machine's Debian archive): %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	if len(globDebs(tmp)) == 0 {
		t.Fatalf("apt-get downloaded no .deb for %s into %s", strings.Join(pkgs, " "), tmp)
	}
	if err := os.Rename(tmp, dir); err != nil && len(globDebs(dir)) == 0 {
		t.Fatalf("caching the .deb files for %s: %v", strings.Join(pkgs, " "), err)
	}
	debs := globDebs(dir)
	t.Logf("downloaded %d .deb file(s) for %s: %s", len(debs), strings.Join(pkgs, " "), fmt.Sprint(names(debs)))
	return debs
}

func globDebs(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
	sort.Strings(m)
	return m
}

func names(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}
