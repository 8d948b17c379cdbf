package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// TestInstallStagedScriptGivesANewMtime runs the rename installStaged uses
// in a real shell on a staged file from an hour ago: the target must come with a
// new mtime, so fapolicyd looks it up afresh under its real path
// (docs/reference/hosts.md §7.4), and the staged copy is gone.
func TestInstallStagedScriptGivesANewMtime(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "k3s")
	staged := StagedPath(target)
	if err := os.WriteFile(staged, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(staged, old, old); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	if err := host.Rename(context.Background(), &hosttest.Local{}, staged, target); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if fi.ModTime().Before(before) {
		t.Errorf("target mtime %v is the staged file's; want one from the install", fi.ModTime())
	}
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Errorf("staged copy left: %v", err)
	}
}
