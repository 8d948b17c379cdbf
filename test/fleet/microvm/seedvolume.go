package microvm

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// seedLabel is the volume label cloud-init's NoCloud source looks for, so
// a user's cloud image reads the same volume the built-in guest does
// (docs/reference/microvm.md §3).
const seedLabel = "CIDATA"

// seedVolumeBytes is the volume's size: a few scripts and keys, with room.
const seedVolumeBytes = 2 << 20

// seedFiles are the files on a guest's seed volume: NoCloud's meta-data
// and user-data, the latter being the first-boot script (cloud-init runs a
// user-data that starts with #! as a script; the built-in image's own
// first-boot unit runs it too).
func seedFiles(fleet string, id identity) map[string][]byte {
	return map[string][]byte{
		"meta-data": []byte(fmt.Sprintf("instance-id: cargoship-%s-%s\nlocal-hostname: %s\n", fleet, id.Hostname, id.Hostname)),
		"user-data": []byte(firstBootScript(id)),
	}
}

// writeSeedVolume makes path a vfat volume labelled CIDATA holding files,
// with mkfs.vfat and mcopy: no mount, so no root.
func writeSeedVolume(ctx context.Context, path string, files map[string][]byte) error {
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return err
	}
	if err := os.Truncate(path, seedVolumeBytes); err != nil {
		return err
	}
	if err := run(ctx, "mkfs.vfat", "-n", seedLabel, path); err != nil {
		return fmt.Errorf("seed volume %s: %w", path, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".seed-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	for _, n := range slices.Sorted(maps.Keys(files)) {
		local := filepath.Join(tmp, n)
		// 0600: the script carries the guest's private host keys
		if err := os.WriteFile(local, files[n], 0o600); err != nil {
			return err
		}
		if err := run(ctx, "mcopy", "-i", path, local, "::"+n); err != nil {
			return fmt.Errorf("seed volume %s: %s: %w", path, n, err)
		}
	}
	return nil
}

// run runs a tool, returning its output in the error when it fails.
func run(ctx context.Context, name string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	// mtools refuses a volume whose geometry it doubts unless told not to
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
