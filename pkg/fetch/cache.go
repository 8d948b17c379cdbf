package fetch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Cache is a content cache under one directory: blobs stored by their
// sha256 in blobs/sha256/<hex>, and an index (index/<sha256 of key>.json)
// from a key, such as a URL, to the blob it produced.
//
// Every write goes to a temporary file inside the cache directory and is
// renamed into place only once its hash is known and checked, so the cache
// never holds a partial or unverified entry, and concurrent writers of the
// same content (two goroutines or two processes) are harmless.
type Cache struct {
	dir string

	mu       sync.Mutex
	verified map[string]blobStamp // blob hex -> stat seen when last hashed
}

// blobStamp identifies one version of a blob file, so a verified blob is not
// re-hashed on every use within a process.
type blobStamp struct {
	size    int64
	modTime time.Time
}

// IndexEntry is what the index records for a key.
type IndexEntry struct {
	// Key is the key as recorded, with URL credentials redacted.
	Key string `json:"key"`
	// SHA256 is the hex digest of the blob the key resolved to.
	SHA256 string `json:"sha256"`
	// Size is the blob's size in bytes.
	Size int64 `json:"size"`
	// Stored is when the entry was written.
	Stored time.Time `json:"stored"`
}

// NewCache opens (creating if needed) a cache rooted at dir, for example the
// user cache dir ~/.cache/cargoship.
func NewCache(dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cache directory %s: %w", dir, err)
	}
	for _, sub := range []string{"blobs/sha256", "index", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o700); err != nil {
			return nil, fmt.Errorf("cache directory %s: %w", abs, err)
		}
	}
	return &Cache{dir: abs, verified: map[string]blobStamp{}}, nil
}

// Dir returns the cache's root directory.
func (c *Cache) Dir() string { return c.dir }

// BlobPath returns where the blob with sha256 hex digest sum is (or would be) stored.
func (c *Cache) BlobPath(sum string) string {
	return filepath.Join(c.dir, "blobs", "sha256", sum)
}

// Stat reports whether the blob is present and its size, without hashing it.
func (c *Cache) Stat(sum string) (size int64, ok bool) {
	if !isHexSHA256(sum) {
		return 0, false
	}
	fi, err := os.Stat(c.BlobPath(sum))
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false
	}
	return fi.Size(), true
}

// Verify reports whether the blob is present and its content still hashes to
// sum. A blob whose content does not match is removed, so the next writer
// replaces it. Hashing is remembered for the life of the Cache as long as
// the file's size and modification time are unchanged.
func (c *Cache) Verify(sum string) (bool, error) {
	if !isHexSHA256(sum) {
		return false, nil
	}
	path := c.BlobPath(sum)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cache blob %s: %w", path, err)
	}
	stamp := blobStamp{size: fi.Size(), modTime: fi.ModTime()}
	c.mu.Lock()
	seen, ok := c.verified[sum]
	c.mu.Unlock()
	if ok && seen == stamp {
		return true, nil
	}
	got, _, err := HashFile(path)
	if err != nil {
		return false, fmt.Errorf("cache blob %s: %w", path, err)
	}
	if got != sum {
		// A corrupted entry is dropped rather than served.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("removing corrupted cache blob %s: %w", path, err)
		}
		return false, nil
	}
	c.markVerified(sum, stamp)
	return true, nil
}

// Remove deletes a blob; a missing blob is not an error.
func (c *Cache) Remove(sum string) error {
	if !isHexSHA256(sum) {
		return fmt.Errorf("cache: %q is not a sha256 hex digest", sum)
	}
	c.mu.Lock()
	delete(c.verified, sum)
	c.mu.Unlock()
	if err := os.Remove(c.BlobPath(sum)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

func (c *Cache) markVerified(sum string, stamp blobStamp) {
	c.mu.Lock()
	c.verified[sum] = stamp
	c.mu.Unlock()
}

// Lookup returns the index entry recorded for key, if any. It does not check
// the blob; callers pair it with Verify or Stat.
func (c *Cache) Lookup(key string) (IndexEntry, bool) {
	b, err := os.ReadFile(c.indexPath(key))
	if err != nil {
		return IndexEntry{}, false
	}
	var e IndexEntry
	if err := json.Unmarshal(b, &e); err != nil || !isHexSHA256(e.SHA256) {
		// An unreadable entry is treated as absent and rewritten later.
		return IndexEntry{}, false
	}
	return e, true
}

// Record writes the index entry for key, atomically. displayKey is what is
// stored for humans reading the index (for URLs: credentials redacted).
func (c *Cache) Record(key, displayKey, sum string, size int64) error {
	if !isHexSHA256(sum) {
		return fmt.Errorf("cache index: %q is not a sha256 hex digest", sum)
	}
	e := IndexEntry{Key: displayKey, SHA256: sum, Size: size, Stored: time.Now().UTC()}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cache index: %w", err)
	}
	return c.writeAtomic(c.indexPath(key), b)
}

func (c *Cache) indexPath(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, "index", hex.EncodeToString(h[:])+".json")
}

func (c *Cache) writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), "index-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cache: writing %s: %w", path, err)
	}
	return nil
}

// HashFile returns the sha256 of the file at path, in lower-case hex, and
// its size.
func HashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
