package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteExtras(t *testing.T) {
	dir := t.TempDir()
	date := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	require.NoError(t, WriteExtras(dir, date))

	for name := range completionFiles {
		data, err := os.ReadFile(filepath.Join(dir, "completions", name))
		require.NoError(t, err)
		// Every script asks cargoship itself for completions (cobra's
		// __complete command), so it names the binary.
		assert.Contains(t, string(data), "cargoship", name)
	}
	// A page per command: the root, apply, version, the completion tree.
	for _, page := range []string{"cargoship.1", "cargoship-apply.1", "cargoship-version.1", "cargoship-completion-bash.1"} {
		data, err := os.ReadFile(filepath.Join(dir, "manpages", page))
		require.NoError(t, err, page)
		assert.True(t, strings.HasPrefix(string(data), `.nh`+"\n"+`.TH "CARGOSHIP" "1" "Dec 2026"`), "%s: %.80q", page, data)
	}

	// A second run writes the same bytes, and drops pages that are gone.
	stale := filepath.Join(dir, "manpages", "cargoship-gone.1")
	require.NoError(t, os.WriteFile(stale, []byte("old"), 0o644))
	first, err := os.ReadFile(filepath.Join(dir, "manpages", "cargoship-apply.1"))
	require.NoError(t, err)
	require.NoError(t, WriteExtras(dir, date))
	again, err := os.ReadFile(filepath.Join(dir, "manpages", "cargoship-apply.1"))
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.NoFileExists(t, stale)
}
