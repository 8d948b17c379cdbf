package k8s

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// layerTar writes an image layer's tar in memory with fixed metadata
// (owner root, one modification time), so the same files give the same
// bytes. Parent directories are added before what they hold.
type layerTar struct {
	buf   bytes.Buffer
	tw    *tar.Writer
	mtime time.Time
	seen  map[string]bool
	err   error
}

func newLayerTar(mtime time.Time) *layerTar {
	l := &layerTar{mtime: mtime, seen: map[string]bool{}}
	l.tw = tar.NewWriter(&l.buf)
	return l
}

func (l *layerTar) header(h *tar.Header) {
	if l.err != nil {
		return
	}
	h.ModTime = l.mtime
	h.Uid, h.Gid = 0, 0
	h.Uname, h.Gname = "", ""
	h.Format = tar.FormatPAX
	if err := l.tw.WriteHeader(h); err != nil {
		l.err = fmt.Errorf("layer %s: %w", h.Name, err)
	}
}

// parents adds the directories above name (clean, relative) not yet in
// the layer.
func (l *layerTar) parents(name string) {
	dir := path.Dir(name)
	if dir == "." || l.seen[dir] {
		return
	}
	l.parents(dir)
	l.dir(dir, 0o755)
}

// dir adds a directory.
func (l *layerTar) dir(name string, mode int64) {
	name = strings.Trim(path.Clean(name), "/")
	if l.seen[name] {
		return
	}
	l.parents(name)
	l.seen[name] = true
	l.header(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode})
}

// file adds a regular file with content.
func (l *layerTar) file(name string, mode int64, content []byte) {
	name = strings.Trim(path.Clean(name), "/")
	l.parents(name)
	l.seen[name] = true
	l.header(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(content))})
	if l.err == nil {
		if _, err := l.tw.Write(content); err != nil {
			l.err = fmt.Errorf("layer %s: %w", name, err)
		}
	}
}

// copyFile adds the file at src as name.
func (l *layerTar) copyFile(name string, mode int64, src string) {
	if l.err != nil {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		l.err = fmt.Errorf("layer %s: %w", name, err)
		return
	}
	l.file(name, mode, b)
}

// symlink adds a symbolic link.
func (l *layerTar) symlink(name, target string) {
	name = strings.Trim(path.Clean(name), "/")
	l.parents(name)
	l.seen[name] = true
	l.header(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777})
}

// tree adds everything under root (directories, regular files, symbolic
// links) in lexical order, except paths skip says to leave out.
func (l *layerTar) tree(root string, skip func(rel string) bool) {
	if l.err != nil {
		return
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := int64(info.Mode().Perm() | info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		switch {
		case d.IsDir():
			l.dir(rel, mode)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			l.symlink(rel, target)
		case info.Mode().IsRegular():
			l.copyFile(rel, mode, p)
		default:
			return fmt.Errorf("%s: not a directory, regular file or symbolic link", p)
		}
		return l.err
	})
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("layer from %s: %w", root, err)
	}
}

// layer closes the tar and makes it a gzip-compressed layer.
func (l *layerTar) layer() (v1.Layer, error) {
	if l.err != nil {
		return nil, l.err
	}
	if err := l.tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	b := l.buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return layer, nil
}
