package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// buildDeb makes a real .deb with dpkg-deb, named and versioned as given.
func buildDeb(t *testing.T, dir, name, version string) string {
	t.Helper()
	root := filepath.Join(dir, name+"-root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755))
	control := "Package: " + name + "\nVersion: " + version + "\nArchitecture: all\nMaintainer: cargoship <t@cargoship.invalid>\nDescription: test\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644))
	out := filepath.Join(dir, name+".deb")
	b, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// The record holds only what the host had at no version before, grows
// without duplicates, and RecordedPackages answers with the recorded names
// the package database still has. This machine's own dpkg database stands
// in for a host's: bash is installed here, the other name is not.
func TestPackagesRecordKeepsOnlyWhatCargoshipBroughtIn(t *testing.T) {
	r, root := hostRoot(t)
	dir := t.TempDir()
	hostsOwn := buildDeb(t, dir, "bash", "0.0-cargoship")
	fresh := buildDeb(t, dir, "cargoship-record-test", "1.0")
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r, OS: hostos.OS{Family: v1alpha1.FamilyDebian}}
	ctx := context.Background()

	names, err := newPackages(ctx, h, []string{hostsOwn, fresh})
	require.NoError(t, err)
	assert.Equal(t, []string{"cargoship-record-test"}, names, "bash is the host's at another version: not cargoship's")

	require.NoError(t, recordPackages(ctx, h, names))
	require.NoError(t, recordPackages(ctx, h, []string{"bash", "cargoship-record-test"}))
	data, err := os.ReadFile(filepath.Join(root, PackagesRecord))
	require.NoError(t, err)
	assert.Equal(t, "bash\ncargoship-record-test\n", string(data), "sorted, each name once")

	got, err := RecordedPackages(ctx, h)
	require.NoError(t, err)
	assert.Equal(t, []string{"bash"}, got, "only recorded names still installed")
}

func TestRecordedPackagesWithoutARecordIsNone(t *testing.T) {
	r, _ := hostRoot(t)
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kw0"}, Conn: r, OS: hostos.OS{Family: v1alpha1.FamilyDebian}}
	got, err := RecordedPackages(context.Background(), h)
	require.NoError(t, err)
	assert.Empty(t, got)
}
