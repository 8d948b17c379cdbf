package microvm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedVolumeIsANoCloudVolume writes a seed volume and reads it back
// with mtools: the label cloud-init looks for, and each file as given.
func TestSeedVolumeIsANoCloudVolume(t *testing.T) {
	for _, tool := range []string{"mkfs.vfat", "mcopy", "mtype", "mlabel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s: %v (hack/deps.sh installs dosfstools and mtools)", tool, err)
		}
	}
	path := filepath.Join(t.TempDir(), "seed.img")
	files := seedFiles("dev", testIdentity())
	if err := writeSeedVolume(context.Background(), path, files); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("seed volume %v %v: want 0600, it carries private host keys", st.Mode(), err)
	}
	mt := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := mt("mlabel", "-i", path, "-s", "::"); !strings.Contains(got, seedLabel) {
		t.Errorf("volume label: %q, want %s", got, seedLabel)
	}
	for name, want := range files {
		if got := mt("mtype", "-i", path, "::"+name); got != string(want) {
			t.Errorf("%s on the volume differs from what was written:\n%s", name, got)
		}
	}
	if !strings.Contains(string(files["meta-data"]), "instance-id: cargoship-dev-kc0\n") {
		t.Errorf("meta-data:\n%s", files["meta-data"])
	}
}
