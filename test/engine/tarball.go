package testengine

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"strings"
)

// RKE2Tarball writes rke2.linux-<arch>.tar.gz around a test engine binary
// built for rke2: bin/rke2, the killall and uninstall scripts, and the
// units and env files under lib/systemd/system, the layout of the real
// release tarball (docs/reference/engines.md 1.2), to unpack under
// /usr/local.
func RKE2Tarball(w io.Writer, binary string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	add := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("bin/rke2", 0o755, bin); err != nil {
		return err
	}
	files, err := Layout("rke2")
	if err != nil {
		return err
	}
	for _, f := range files {
		if f.Source == SourceBinary || f.Source == SourceKubectl {
			continue
		}
		data, err := Unit(f.Source)
		if err != nil {
			return err
		}
		if err := add(strings.TrimPrefix(f.Target, "/usr/local/"), int64(f.Mode), data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
