package fetch

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlobWriterStoresOnlyVerifiedContent(t *testing.T) {
	c, err := NewCache(t.TempDir())
	require.NoError(t, err)
	content := []byte("layer bytes")

	bw, err := c.Create()
	require.NoError(t, err)
	_, err = bw.Write(content)
	require.NoError(t, err)
	_, _, err = bw.Commit(sha([]byte("something else")))
	var mm *MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, sha(content), mm.Actual)
	requireNoPartials(t, c)

	bw, err = c.Create()
	require.NoError(t, err)
	_, _ = bw.Write(content)
	bw.Abort()
	requireNoPartials(t, c)

	bw, err = c.Create()
	require.NoError(t, err)
	_, _ = bw.Write([]byte("discarded by a restart"))
	require.NoError(t, bw.Reset())
	_, _ = bw.Write(content)
	sum, size, err := bw.Commit(sha(content))
	require.NoError(t, err)
	assert.Equal(t, sha(content), sum)
	assert.Equal(t, int64(len(content)), size)
	got, err := os.ReadFile(c.BlobPath(sum))
	require.NoError(t, err)
	assert.Equal(t, content, got)
}

// Two creates running at once (two goroutines or two processes sharing
// the user cache) may store the same blob; both must succeed.
func TestCacheConcurrentWritersOfSameBlob(t *testing.T) {
	c, err := NewCache(t.TempDir())
	require.NoError(t, err)
	content := randomBytes(t, 64<<10)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			bw, err := c.Create()
			if err != nil {
				errs[i] = err
				return
			}
			defer bw.Abort()
			if _, err := bw.Write(content); err != nil {
				errs[i] = err
				return
			}
			_, _, errs[i] = bw.Commit(sha(content))
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	ok, err := c.Verify(sha(content))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Empty(t, dirEntries(t, filepath.Join(c.Dir(), "tmp")))
}

func TestCacheVerifyDropsCorruptedBlob(t *testing.T) {
	dir := t.TempDir()
	c, err := NewCache(dir)
	require.NoError(t, err)
	sum := sha([]byte("good"))
	require.NoError(t, os.WriteFile(c.BlobPath(sum), []byte("bad!"), 0o600))
	ok, err := c.Verify(sum)
	require.NoError(t, err)
	assert.False(t, ok)
	_, present := c.Stat(sum)
	assert.False(t, present, "a blob that does not match its name is removed")
}

func TestCacheIndexRoundTripAndDamage(t *testing.T) {
	c, err := NewCache(t.TempDir())
	require.NoError(t, err)
	sum := sha([]byte("x"))
	require.NoError(t, c.Record("url:https://u:p@example.com/a", "https://u:xxxxx@example.com/a", sum, 1))
	e, ok := c.Lookup("url:https://u:p@example.com/a")
	require.True(t, ok)
	assert.Equal(t, sum, e.SHA256)
	assert.Equal(t, "https://u:xxxxx@example.com/a", e.Key, "the index never stores credentials")

	files := dirEntries(t, filepath.Join(c.Dir(), "index"))
	require.Len(t, files, 1)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir(), "index", files[0]), []byte("{not json"), 0o600))
	_, ok = c.Lookup("url:https://u:p@example.com/a")
	assert.False(t, ok, "a damaged index entry reads as a miss")

	require.Error(t, c.Record("k", "k", "not-a-digest", 1))
}

func TestNewCacheNeedsDirectory(t *testing.T) {
	_, err := NewCache("")
	require.Error(t, err)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = NewCache(file)
	require.ErrorContains(t, err, file)
}
