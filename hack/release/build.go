package release

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// Goreleaser is the goreleaser this release is built with, run with go run
// so nothing but the Go module proxy is needed.
const Goreleaser = "github.com/goreleaser/goreleaser/v2@v2.15.1"

// ConfigFile is goreleaser's configuration, at the module's root.
const ConfigFile = ".goreleaser.yaml"

// distLine is the line of ConfigFile that names the output directory;
// Build rewrites it, goreleaser having no flag for it.
const distLine = "dist: build/release\n"

// PublicKeyName is the public key Build writes beside checksums.txt.sig,
// derived from the signing key so the two always match. A user checks a
// download with the key published apart from it (docs/release.md); the copy
// in the release is for checking a build on the machine that made it.
const PublicKeyName = "cargoship-release.pub"

// Options say where a release goes and what signs it.
type Options struct {
	// Root is the module's root: goreleaser builds the checkout there.
	Root string
	// Dist is the directory the release is written into (emptied first).
	Dist string
	// Key is the ed25519 private key (`cargoship keygen`) that signs
	// checksums.txt.
	Key string
	// Log gets goreleaser's and go's output.
	Log io.Writer
}

// Build makes a snapshot release of the checkout at o.Root into o.Dist:
// goreleaser builds the archives and checksums.txt, running the release
// tool to write the SBOMs and sign checksums.txt; the completions and man
// pages it packs are written here first. Nothing needs a network but the
// module proxy (for goreleaser itself and modules not yet cached).
func Build(ctx context.Context, o Options) error {
	key, err := filepath.Abs(o.Key)
	if err != nil {
		return err
	}
	priv, err := pkgfile.LoadPrivateKey(key)
	if err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	dist, err := filepath.Abs(o.Dist)
	if err != nil {
		return err
	}
	// Inside the checkout (build/ is ignored by git): goreleaser finds an
	// archive's files by a glob relative to the checkout only.
	if err := os.MkdirAll(filepath.Join(o.Root, "build"), 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(filepath.Join(o.Root, "build"), ".release-")
	if err != nil {
		return err
	}
	defer func() {
		// Best effort: the tool and the extras are in the release by now,
		// and a leftover temporary directory harms nothing.
		_ = os.RemoveAll(work)
	}()

	bin, extras := filepath.Join(work, "bin"), filepath.Join(work, "extras")
	o.Log = lockedWriter(o.Log)
	// The release tool, goreleaser's executable and the files goreleaser
	// reads need nothing of each other: made at once they take as long as
	// the slowest of them, not the sum (14 s down to 10 s on two busy
	// cores).
	var goreleaser, env []string
	var config string
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := o.run(gctx, nil, "go", "build", "-o", filepath.Join(bin, "cargoship-release-tool"), "./hack/release/tool"); err != nil {
			return fmt.Errorf("build the release tool: %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		goreleaser, err = o.goreleaserCommand(gctx)
		return err
	})
	g.Go(func() (err error) {
		date, err := commitTime(gctx, o.Root)
		if err != nil {
			return err
		}
		if err := WriteExtras(extras, date); err != nil {
			return err
		}
		if config, err = writeConfig(o.Root, work, dist); err != nil {
			return err
		}
		env, err = withRemote(gctx, o.Root, []string{
			"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
			"CARGOSHIP_RELEASE_KEY=" + key,
			"CARGOSHIP_RELEASE_EXTRAS=" + repoRel(o.Root, extras),
		})
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	args := append(slices.Clone(goreleaser[1:]), "release", "--snapshot", "--clean", "--config", config)
	if err := o.run(ctx, env, goreleaser[0], args...); err != nil {
		return fmt.Errorf("goreleaser: %w", err)
	}
	return writePublicKey(filepath.Join(dist, PublicKeyName), priv.Public())
}

// run runs a command in the module's root with env added to this
// process's environment.
func (o Options) run(ctx context.Context, env []string, name string, args ...string) error {
	cmd := o.command(ctx, env, name, args...)
	cmd.Stdout = o.Log
	if o.Log == nil {
		cmd.Stdout = os.Stdout
	}
	if _, err := fmt.Fprintf(cmd.Stderr, "$ %s %s\n", name, strings.Join(args, " ")); err != nil {
		return err
	}
	return cmd.Run()
}

// command is a command in the module's root with env added to this
// process's environment, its standard error going to the log.
func (o Options) command(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = o.Log
	if o.Log == nil {
		cmd.Stderr = os.Stderr
	}
	return cmd
}

// commitTime is HEAD's commit time: the man pages' date, as the binaries'
// build date is the commit's, so a release of one commit is the same bytes.
func commitTime(ctx context.Context, root string) (time.Time, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "log", "-1", "--format=%cI").Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("git log: %w", err)
	}
	return time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
}

// repoRel is p relative to root, with forward slashes, as goreleaser's
// archive globs want it.
func repoRel(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// ModuleURL is the project's home, the remote a checkout without one is
// given for goreleaser.
const ModuleURL = "https://github.com/colonel-byte/cargoship"

// withRemote adds a remote.origin.url to git's configuration through the
// environment (GIT_CONFIG_COUNT, git 2.31) when the checkout has no
// remote: goreleaser asks git for the remote's URL and, in snapshot mode,
// answers a failure with commit "none" for everything, so the binaries
// would name no commit. The checkout's own configuration is not touched.
func withRemote(ctx context.Context, root string, env []string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "remote").Output()
	if err != nil {
		return nil, fmt.Errorf("git remote: %w", err)
	}
	if strings.TrimSpace(string(out)) != "" || os.Getenv("GIT_CONFIG_COUNT") != "" {
		return env, nil
	}
	return append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=remote.origin.url", "GIT_CONFIG_VALUE_0="+ModuleURL), nil
}

// writeConfig copies ConfigFile into work with its dist line naming dist.
func writeConfig(root, work, dist string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, ConfigFile))
	if err != nil {
		return "", err
	}
	if bytes.Count(data, []byte(distLine)) != 1 {
		return "", fmt.Errorf("%s: want the line %q once", ConfigFile, strings.TrimSpace(distLine))
	}
	data = bytes.Replace(data, []byte(distLine), []byte(fmt.Sprintf("dist: %q\n", dist)), 1)
	p := filepath.Join(work, "goreleaser.yaml")
	return p, os.WriteFile(p, data, 0o644)
}

// writePublicKey writes pub as PKIX PEM, the form `cargoship keygen` writes.
func writePublicKey(p string, pub any) error {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return err
	}
	return os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
}
