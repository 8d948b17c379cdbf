// Package localfile reads the operator's own small files (documents, keys,
// settings) with a size bound, refusing anything that is not a regular
// file: /dev/zero would grow without end and a FIFO would block past
// every timeout.
package localfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is returned for a directory, device, FIFO or socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned for a file over the limit.
var ErrTooLarge = errors.New("larger than allowed")

// Read returns the contents of the regular file at path, refusing one
// larger than limit bytes. The file is opened non-blocking, so a FIFO is
// refused rather than waited on; a symlink is followed, as the operator's
// own links (~/.ssh/id_ed25519 -> ...) are normal.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, %w (%d)", path, st.Size(), ErrTooLarge, limit)
	}
	// The size can change between the stat and the read: bound the read too.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past %d bytes while read: %w", path, limit, ErrTooLarge)
	}
	return data, nil
}

func checkRegular(path string, st fs.FileInfo) error {
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s is a directory, %w", path, ErrNotRegular)
	default:
		return fmt.Errorf("%s is a %s, %w", path, kind(m), ErrNotRegular)
	}
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	default:
		return "special file"
	}
}
