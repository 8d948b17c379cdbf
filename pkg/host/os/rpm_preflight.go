package hostos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
)

// RPMKeyDir is where Enterprise Linux keeps the vendors' package signing
// keys. An os.files entry placed under it is a key to import, not a
// package to install (docs/reference/hosts.md §2.9).
const RPMKeyDir = "/etc/pki/rpm-gpg/"

// IsRPMKey says an uploaded file is a signing key for rpm --import.
func IsRPMKey(path string) bool {
	return strings.HasPrefix(path, RPMKeyDir) && len(path) > len(RPMKeyDir)
}

// SplitRPMKeys separates signing keys from package files.
func SplitRPMKeys(files []string) (pkgs, keys []string) {
	for _, f := range files {
		if IsRPMKey(f) {
			keys = append(keys, f)
		} else {
			pkgs = append(pkgs, f)
		}
	}
	return pkgs, keys
}

// HasRPM says the host has an rpm database to ask: Flatcar, which builds
// the container policy into its own SELinux policy, has none.
func HasRPM(ctx context.Context, r host.Runner) (bool, error) {
	tool, err := firstTool(ctx, r, "rpm")
	return tool != "", err
}

// dnf5Repos: dnf5 exits 2 on --disable-repo='*' when no repository is
// configured at all, common on an air-gapped host (docs/reference/hosts.md
// §2.9). The option is probed with a command that only reads the
// configuration; with no repository there is nothing to disable.
const dnf5Repos = `if dnf5 -q --disable-repo='*' repo list >/dev/null 2>&1; then set -- --disable-repo='*' "$@"; fi
`

// resolveSuffix runs the command with its output and prints its exit
// status after it, so a refused transaction is read, not just failed.
const resolveSuffix = `"$@" 2>&1; echo "cargoship-exit=$?"`

// resolveCommand renders the offline dependency check of files: the
// tool's own solver with every repository disabled and the answer "no"
// (dnf, yum), or rpm's --test. Nothing is installed.
func resolveCommand(tool string, files []string) (string, error) {
	switch tool {
	case "dnf5":
		return host.Script(dnf5Repos+`set -- dnf5 "$@"; `+resolveSuffix, append([]string{"--assumeno", "--setopt=install_weak_deps=False", "install"}, files...)...), nil
	case "dnf":
		return host.Script(resolveSuffix, append([]string{"dnf", "--assumeno", "--disablerepo=*", "--setopt=install_weak_deps=False", "install"}, files...)...), nil
	case "yum":
		return host.Script(resolveSuffix, append([]string{"yum", "--assumeno", "--disablerepo=*", "install"}, files...)...), nil
	case "rpm":
		return host.Script(resolveSuffix, append([]string{"rpm", "-U", "--test"}, files...)...), nil
	}
	return "", fmt.Errorf("%w (found %q)", ErrNoPackageTool, tool)
}

// unresolvedLines picks the solver's complaints out of its output: dnf's
// and dnf5's "nothing provides X needed by Y" and conflicts under
// "Problem", yum 3's "Requires: X" under "Error: Package: Y", rpm's
// "X is needed by Y".
func unresolvedLines(out string) []string {
	var found []string
	pkg := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		switch {
		case strings.HasPrefix(l, "Error: Package: "):
			pkg = strings.TrimPrefix(l, "Error: Package: ")
			continue
		case strings.HasPrefix(l, "Requires: ") && pkg != "":
			l = strings.TrimPrefix(l, "Requires: ") + " needed by " + pkg
		case strings.Contains(l, "nothing provides "), strings.Contains(l, " is needed by "),
			strings.Contains(l, " conflicts with "), strings.HasPrefix(l, "cannot install "),
			strings.Contains(l, "none of the providers can be installed"):
			l = strings.TrimPrefix(l, "Problem: ")
		default:
			continue
		}
		if !slices.Contains(found, l) {
			found = append(found, l)
		}
	}
	return found
}

// gpgcheckScript prints the last localpkg_gpgcheck value of dnf's and
// yum's main configuration, "" when neither sets it.
const gpgcheckScript = `for f in /etc/dnf/dnf.conf /etc/yum.conf; do [ -r "$f" ] && cat "$f"; done | awk -F= '{k=$1; gsub(/[ \t]/, "", k)} k == "localpkg_gpgcheck" {v=$2; gsub(/[ \t\r]/, "", v)} END {print "localpkg_gpgcheck=" v}'`

// localpkgGPGCheck reports whether dnf checks signatures of package files
// given on the command line (STIG hosts set it; the default is off).
func localpkgGPGCheck(ctx context.Context, r host.Runner) (bool, error) {
	out, err := r.Sudo(ctx, host.Script(gpgcheckScript))
	if err != nil {
		return false, fmt.Errorf("reading localpkg_gpgcheck: %w", err)
	}
	_, v, _ := strings.Cut(strings.TrimSpace(out), "localpkg_gpgcheck=")
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true, nil
	}
	return false, nil
}

// sigScript prints file<TAB>ok|bad<TAB>rpm's verdict for each file.
const sigScript = `for f in "$@"; do
  if out=$(rpm -K "$f" 2>&1); then s=ok; else s=bad; fi
  printf '%s\t%s\t%s\n' "$f" "$s" "$(printf '%s' "$out" | tr '\t\n' '  ')"
done`

// unverifiable lists the files whose signature rpm cannot check with the
// keys the host has imported.
func unverifiable(ctx context.Context, r host.Runner, files []string) ([]string, error) {
	out, err := r.Sudo(ctx, host.Script(sigScript, files...))
	if err != nil {
		return nil, fmt.Errorf("checking package signatures: %w", err)
	}
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.SplitN(l, "\t", 3); len(f) == 3 && f[1] != "ok" {
			bad = append(bad, f[0]+" ("+strings.TrimSpace(f[2])+")")
		}
	}
	return bad, nil
}

// RPMPreflight gets a transaction of uploaded rpm files ready before any
// of it is installed: it imports the carried signing keys, checks that a
// host enforcing localpkg_gpgcheck can verify every file, and resolves
// the dependencies with every repository disabled, naming what is
// missing. Families other than Enterprise Linux pass untouched.
func RPMPreflight(ctx context.Context, r host.Runner, cfg Configurer, tool string, files, keys []string) error {
	if _, ok := cfg.(EnterpriseLinux); !ok || len(files) == 0 {
		return nil
	}
	if len(keys) > 0 {
		if _, err := r.Sudo(ctx, host.Script(`rpm --import "$@"`, keys...)); err != nil {
			return fmt.Errorf("importing the package signing keys %s: %w", strings.Join(keys, ", "), err)
		}
	}
	check, err := localpkgGPGCheck(ctx, r)
	if err != nil {
		return err
	}
	if check {
		bad, err := unverifiable(ctx, r, files)
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			carried := "the package carries no signing key for this host"
			if len(keys) > 0 {
				carried = "the keys the package carries (" + strings.Join(keys, ", ") + ") do not sign them"
			}
			return fmt.Errorf("dnf.conf sets localpkg_gpgcheck=1, so dnf refuses package files whose signature cannot be checked, and %s: %s; add the vendor's public key to os.files with a target under %s and selector.package: rpm", carried, strings.Join(bad, "; "), RPMKeyDir)
		}
	}
	return ResolveOffline(ctx, r, tool, files)
}

// ResolveOffline runs the solver on files with every repository disabled
// and fails, naming each missing dependency or conflict, when the
// transaction could not be installed. It changes nothing.
func ResolveOffline(ctx context.Context, r host.Runner, tool string, files []string) error {
	cmd, err := resolveCommand(tool, files)
	if err != nil {
		return err
	}
	out, err := r.Sudo(ctx, cmd)
	if err != nil {
		return fmt.Errorf("resolving the dependencies of %s: %w", strings.Join(files, ", "), err)
	}
	if problems := unresolvedLines(out); len(problems) > 0 {
		return fmt.Errorf("the uploaded rpm files cannot be installed with every repository disabled: %s; add the missing packages to os.files (selector.package: rpm), nothing was installed", strings.Join(problems, "; "))
	}
	return nil
}
