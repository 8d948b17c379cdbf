package node

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// PackagesRecord lists, one name per line, the OS packages cargoship
// installed on a host that were not installed before: a reset removes
// these and only these (docs/reset.md, "What a reset removes"). A package
// the host already had, at any version, is the host's and stays.
const PackagesRecord = StateDir + "/packages"

// newPackages are the names of the packages in files that the host has at
// no version at all: the ones an install would bring in fresh.
func newPackages(ctx context.Context, h *Host, files []string) ([]string, error) {
	cfg := hostos.For(h.OS)
	var out []string
	for _, f := range files {
		pkg, err := cfg.PackageFile(ctx, h.Conn, f)
		if err != nil {
			return nil, err
		}
		have, err := cfg.Installed(ctx, h.Conn, pkg.Name)
		if err != nil {
			return nil, err
		}
		if len(have) == 0 {
			out = append(out, pkg.Name)
		}
	}
	return out, nil
}

// readRecord is the names in h's record; none when it has no record.
func readRecord(ctx context.Context, h *Host) ([]string, error) {
	data, _, err := host.ReadFileIfExists(ctx, h.Conn, PackagesRecord)
	if err != nil {
		return nil, fmt.Errorf("reading the record of installed packages: %w", err)
	}
	return strings.Fields(string(data)), nil
}

// recordPackages adds names to h's record, written only when it grows.
func recordPackages(ctx context.Context, h *Host, names []string) error {
	if len(names) == 0 {
		return nil
	}
	had, err := readRecord(ctx, h)
	if err != nil {
		return err
	}
	all := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(had), names...))))
	if _, err := host.WriteFile(ctx, h.Conn, PackagesRecord, []byte(strings.Join(all, "\n")+"\n"), 0o644, ""); err != nil {
		return fmt.Errorf("recording the installed packages: %w", err)
	}
	return nil
}

// RecordedPackages are the packages in h's record that are still
// installed: what a reset removes from h.
func RecordedPackages(ctx context.Context, h *Host) ([]string, error) {
	names, err := readRecord(ctx, h)
	if err != nil {
		return nil, err
	}
	cfg := hostos.For(h.OS)
	var out []string
	for _, n := range names {
		have, err := cfg.Installed(ctx, h.Conn, n)
		if err != nil {
			return nil, err
		}
		if len(have) > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// removePackages removes names from h in one transaction and checks each
// is gone: the package manager's answer alone is not trusted.
func removePackages(ctx context.Context, h *Host, names []string) error {
	cfg := hostos.For(h.OS)
	cmd, err := cfg.RemoveCommand(names)
	if err != nil {
		return err
	}
	if _, err := h.Conn.Sudo(ctx, cmd); err != nil {
		return fmt.Errorf("removing packages %s: %w", strings.Join(names, ", "), err)
	}
	left, err := RecordedPackages(ctx, h)
	if err != nil {
		return err
	}
	if stay := slices.DeleteFunc(left, func(n string) bool { return !slices.Contains(names, n) }); len(stay) > 0 {
		return fmt.Errorf("still installed after removing: %s", strings.Join(stay, ", "))
	}
	return nil
}
