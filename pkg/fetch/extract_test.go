package fetch

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// archiveEntry is one member of a test archive.
type archiveEntry struct {
	name     string
	body     []byte
	linkname string // a symlink when set
	dir      bool
}

// rke2LikeEntries mimics the layout of an engine release tarball.
func rke2LikeEntries(t testing.TB) []archiveEntry {
	return []archiveEntry{
		{name: "./bin/", dir: true},
		{name: "./bin/rke2", body: randomBytes(t, 150_000)},
		{name: "./bin/rke2-killall.sh", body: []byte("#!/bin/sh\nkill all\n")},
		{name: "./bin/link", linkname: "rke2"},
		{name: "./share/rke2/LICENSE.txt", body: []byte("license")},
		{name: "../evil", body: []byte("outside")},
	}
}

func writeTar(t testing.TB, w io.Writer, entries []archiveEntry) {
	t.Helper()
	tw := tar.NewWriter(w)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o755, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch {
		case e.dir:
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		case e.linkname != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.linkname, 0
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if hdr.Typeflag == tar.TypeReg {
			_, err := tw.Write(e.body)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
}

// buildArchive writes entries in format ("tar", "tar.gz", "tar.zst", "zip").
func buildArchive(t testing.TB, format string, entries []archiveEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch format {
	case "tar":
		writeTar(t, &buf, entries)
	case "tar.gz":
		zw := gzip.NewWriter(&buf)
		writeTar(t, zw, entries)
		require.NoError(t, zw.Close())
	case "tar.zst":
		zw, err := zstd.NewWriter(&buf)
		require.NoError(t, err)
		writeTar(t, zw, entries)
		require.NoError(t, zw.Close())
	case "zip":
		zw := zip.NewWriter(&buf)
		for _, e := range entries {
			if e.dir || e.linkname != "" {
				hdr := &zip.FileHeader{Name: e.name}
				if e.dir {
					hdr.SetMode(os.ModeDir | 0o755)
				} else {
					hdr.SetMode(os.ModeSymlink | 0o777)
				}
				w, err := zw.CreateHeader(hdr)
				require.NoError(t, err)
				_, err = w.Write([]byte(e.linkname))
				require.NoError(t, err)
				continue
			}
			w, err := zw.Create(e.name)
			require.NoError(t, err)
			_, err = w.Write(e.body)
			require.NoError(t, err)
		}
		require.NoError(t, zw.Close())
	default:
		t.Fatalf("unknown archive format %s", format)
	}
	return buf.Bytes()
}

var archiveFormats = []string{"tar", "tar.gz", "tar.zst", "zip"}

func TestExtractPathFromEveryFormat(t *testing.T) {
	for _, format := range archiveFormats {
		t.Run(format, func(t *testing.T) {
			entries := rke2LikeEntries(t)
			want := entries[1].body
			archive := buildArchive(t, format, entries)
			// No extension in the name: the format is read from the bytes.
			p := filepath.Join(t.TempDir(), "artifact")
			require.NoError(t, os.WriteFile(p, archive, 0o600))
			f := newFetcher(t)

			for _, extractPath := range []string{"bin/rke2", "./bin/rke2", "/bin/rke2"} {
				got, res, err := fetchBytes(t, f, Request{Source: p, ExtractPath: extractPath, Shasum: sha(archive)})
				require.NoError(t, err, extractPath)
				assert.Equal(t, want, got, extractPath)
				assert.Equal(t, sha(want), res.SHA256)
				assert.Equal(t, int64(len(want)), res.Size)
				assert.Equal(t, sha(archive), res.SourceSHA256, "SourceSHA256 is the archive's")
			}
		})
	}
}

func TestExtractPathFromDownloadedArchiveIsCached(t *testing.T) {
	entries := rke2LikeEntries(t)
	archive := buildArchive(t, "tar.gz", entries)
	srv := newFileServer(t, archive, nil)
	f := newFetcher(t)
	req := Request{Source: srv.url("rke2.linux-amd64.tar.gz"), ExtractPath: "bin/rke2-killall.sh"}

	p, res, err := f.Materialize(t.Context(), req)
	require.NoError(t, err)
	assert.False(t, res.Cached)
	body, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, entries[2].body, body)

	p2, res2, err := f.Materialize(t.Context(), req)
	require.NoError(t, err)
	assert.True(t, res2.Cached)
	assert.Equal(t, p, p2, "the extracted entry is reused, not extracted again")
	assert.Equal(t, 1, srv.requests())
}

func TestExtractMissingEntryNamesArchiveAndEntry(t *testing.T) {
	for _, format := range archiveFormats {
		t.Run(format, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "rke2."+format)
			require.NoError(t, os.WriteFile(p, buildArchive(t, format, rke2LikeEntries(t)), 0o600))
			_, _, err := fetchBytes(t, newFetcher(t), Request{Source: p, ExtractPath: "rke2"})
			var nf *EntryNotFoundError
			require.ErrorAs(t, err, &nf)
			assert.Equal(t, p, nf.Archive)
			assert.Equal(t, "rke2", nf.Entry)
			assert.Equal(t, []string{"bin/rke2"}, nf.Similar, "the error suggests the entry with that base name")
			assert.Contains(t, err.Error(), p)
		})
	}
}

func TestExtractRefusesPathTraversal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "evil.tar")
	require.NoError(t, os.WriteFile(p, buildArchive(t, "tar", rke2LikeEntries(t)), 0o600))
	f := newFetcher(t)
	for _, bad := range []string{"../evil", "bin/../../evil", `..\evil`} {
		var out bytes.Buffer
		_, err := f.Fetch(t.Context(), Request{Source: p, ExtractPath: bad}, &out)
		require.ErrorContains(t, err, "refused", bad)
		assert.Zero(t, out.Len(), bad)
	}
	requireNoPartials(t, f.Cache)
}

func TestExtractRefusesLinksAndDirectories(t *testing.T) {
	for _, format := range archiveFormats {
		t.Run(format, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a")
			require.NoError(t, os.WriteFile(p, buildArchive(t, format, rke2LikeEntries(t)), 0o600))
			f := newFetcher(t)
			_, _, err := fetchBytes(t, f, Request{Source: p, ExtractPath: "bin/link"})
			require.ErrorContains(t, err, "link")
			_, _, err = fetchBytes(t, f, Request{Source: p, ExtractPath: "bin"})
			require.ErrorContains(t, err, "not a regular file")
		})
	}
}

func TestExtractFromNonArchiveIsClearError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k3s")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("ELF binary, not a tar "), 100), 0o600))
	_, _, err := fetchBytes(t, newFetcher(t), Request{Source: p, ExtractPath: "bin/k3s"})
	require.ErrorContains(t, err, "not a readable tar")
	require.ErrorContains(t, err, p)
}
