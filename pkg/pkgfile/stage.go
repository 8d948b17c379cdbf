package pkgfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/colonel-byte/cargoship/pkg/fetch"
)

// stagedEntry is a payload entry whose bytes are on disk (in the download
// cache, a local source, or the staging directory) with digest and size
// known, ready to be streamed into the package.
type stagedEntry struct {
	Entry
	path string
}

// stage fetches every file and writes every image archive, in parallel
// under Concurrency. Each entry is hashed once here; the package writer
// hashes again while streaming and fails if a byte changed in between.
func (b *builder) stage(ctx context.Context, stageDir string) ([]stagedEntry, error) {
	fetcher, puller, err := b.clients(stageDir)
	if err != nil {
		return nil, err
	}
	n := b.opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	locks := sourceLocks{}
	out := make([]stagedEntry, len(b.planned))
	for i, pe := range b.planned {
		g.Go(func() error {
			s, err := b.stageFile(gctx, fetcher, &locks, stageDir, pe)
			if err != nil {
				return fmt.Errorf("%s: %w", pe.field, err)
			}
			out[i] = s
			return nil
		})
	}
	ic := b.distro.Spec.Config.ImageConfig
	images := make([]stagedEntry, len(b.arches))
	if len(ic.Images) > 0 {
		for i, arch := range b.arches {
			g.Go(func() error {
				s, err := b.stageImages(gctx, puller, stageDir, arch, ic.Images, ic.Compression)
				if err != nil {
					return fmt.Errorf("spec.config.imageConfig.images (%s): %w", arch, err)
				}
				images[i] = s
				return nil
			})
		}
	} else {
		images = nil
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out = append(out, images...)
	slices.SortFunc(out, func(a, b stagedEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// clients builds the fetcher and the image puller over the cache: files
// under <cache>/files, image blobs under <cache>/images. With no cache dir a
// throwaway one inside the staging directory still lets one run share
// downloads between entries.
func (b *builder) clients(stageDir string) (*fetch.Fetcher, imageArchiver, error) {
	cacheDir := b.opts.CacheDir
	if cacheDir == "" {
		cacheDir = filepath.Join(stageDir, "cache")
	}
	cache, err := fetch.NewCache(filepath.Join(cacheDir, "files"))
	if err != nil {
		return nil, nil, err
	}
	f := &fetch.Fetcher{
		Cache: cache, Client: b.opts.HTTPClient, Retries: b.opts.Retries, Backoff: b.opts.Backoff,
		Log: b.log, Progress: b.opts.Progress,
	}
	return f, newImageArchiver(filepath.Join(cacheDir, "images"), b.opts, b.log), nil
}

// stageFile brings one file onto disk: inline data into the staging
// directory, everything else through the fetcher (download cache, or the
// local file itself).
func (b *builder) stageFile(ctx context.Context, f *fetch.Fetcher, locks *sourceLocks, stageDir string, pe plannedEntry) (stagedEntry, error) {
	if pe.data != nil {
		path := filepath.Join(stageDir, "data", filepath.FromSlash(pe.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return stagedEntry{}, err
		}
		if err := os.WriteFile(path, []byte(*pe.data), 0o600); err != nil {
			return stagedEntry{}, err
		}
		e := pe.Entry
		e.SHA256, e.Size = sha256Hex([]byte(*pe.data)), int64(len(*pe.data))
		return stagedEntry{Entry: e, path: path}, nil
	}
	// Entries sharing a source (several files out of one tarball) fetch it
	// one after another, so the second finds it cached instead of
	// downloading it again in parallel.
	unlock := locks.lock(pe.Source)
	defer unlock()
	path, res, err := f.Materialize(ctx, fetch.Request{
		Source: pe.Source, BaseDir: b.baseDir, Shasum: pe.shasum, ExtractPath: pe.ExtractPath,
	})
	if err != nil {
		return stagedEntry{}, err
	}
	e := pe.Entry
	e.SHA256, e.Size = res.SHA256, res.Size
	b.log.Debug("staged", "entry", e.Name, "source", e.Source, "bytes", e.Size, "cached", res.Cached)
	return stagedEntry{Entry: e, path: path}, nil
}

// stageImages writes one architecture's image archive into the staging
// directory, hashing it as it is written.
func (b *builder) stageImages(ctx context.Context, p imageArchiver, stageDir, arch string, refs []string, compression string) (stagedEntry, error) {
	archive := p.ArchiveName(arch, compression)
	path := filepath.Join(stageDir, "images", archive)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return stagedEntry{}, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return stagedEntry{}, err
	}
	defer f.Close()
	hw := &hashingWriter{w: f, h: sha256.New()}
	b.log.Info("pulling images", "arch", arch, "images", len(refs), "compression", compression)
	sum, err := p.WriteArchive(ctx, hw, refs, arch, compression)
	if err != nil {
		return stagedEntry{}, err
	}
	if err := f.Close(); err != nil {
		return stagedEntry{}, err
	}
	e := Entry{
		Name: ImageEntryName(archive), Kind: KindImages, Index: -1,
		Target: b.distro.Spec.Config.ImageConfig.Path, IsDirectory: true,
		SHA256: hex.EncodeToString(hw.h.Sum(nil)), Size: hw.n, Mode: 0o644, Architecture: arch,
	}
	e.Images = sum
	b.log.Info("image archive staged", "arch", arch, "entry", e.Name, "bytes", e.Size)
	return stagedEntry{Entry: e, path: path}, nil
}

// hashingWriter hashes and counts what passes through it.
type hashingWriter struct {
	w interface{ Write([]byte) (int, error) }
	h hash.Hash
	n int64
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

// sourceLocks serialises work on one source.
type sourceLocks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (l *sourceLocks) lock(key string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*sync.Mutex{}
	}
	m, ok := l.m[key]
	if !ok {
		m = &sync.Mutex{}
		l.m[key] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}
