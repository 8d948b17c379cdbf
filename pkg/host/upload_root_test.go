package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// plainRunner hides Conn's SFTPOpener, so Upload takes its cat path.
type plainRunner struct{ Runner }

// uploadRunners are the ways Upload is tested: SFTP over each mode and
// sudo mode, and the cat fallback.
func (f *fixture) uploadRunners(t *testing.T) map[string]Runner {
	out := map[string]Runner{}
	for name, c := range f.fileConns(t) {
		out[name+", sftp"] = c
	}
	out["ssh, cat"] = plainRunner{connect(t, f.sshHost(userNoPW), f.opts(nil, nil))}
	h := f.sshHost(userPW)
	h.SudoPasswordEnv = "CSTEST_SUDO"
	out["ssh, sudo -S, cat"] = plainRunner{connect(t, h, f.opts(nil, map[string]string{"CSTEST_SUDO": f.password}))}
	return out
}

// testData writes size pseudo-random bytes to a file, streaming, and
// returns its path and sha256.
func testData(t testing.TB, size int64) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	h := sha256.New()
	src := io.LimitReader(rand.NewChaCha8([32]byte{byte(size)}), size)
	if _, err := io.Copy(io.MultiWriter(out, h), src); err != nil {
		t.Fatal(err)
	}
	return p, hex.EncodeToString(h.Sum(nil))
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
		t.Fatalf("%s and %s differ (%v, %v)", a, b, err1, err2)
	}
}

func TestUploadSkipsAndResumes(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	const size = 1<<20 + 12345
	src, sum := testData(t, size)
	for name, r := range f.uploadRunners(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), "opt", "bin", "engine")
			part := dst + PartSuffix
			owner := userNoSudo + ":" + userNoSudo

			res, err := Upload(ctx, r, LocalFile(src), size, sum, dst, 0o755, owner)
			if err != nil || res.Skipped || res.BytesSent != size {
				t.Fatalf("first upload: %+v, %v; want %d bytes sent", res, err, size)
			}
			sameFile(t, src, dst)
			fi, _ := Stat(ctx, r, dst)
			if fi.Mode != 0o755 || fi.Owner() != owner {
				t.Errorf("uploaded file: %+v; want 0755 %s", fi, owner)
			}

			res, err = Upload(ctx, r, LocalFile(src), size, sum, dst, 0o755, owner)
			if err != nil || !res.Skipped || res.BytesSent != 0 {
				t.Errorf("second upload: %+v, %v; want skipped, 0 bytes", res, err)
			}

			res, err = Upload(ctx, r, LocalFile(src), size, sum, dst, 0o700, "root:root")
			fi, _ = Stat(ctx, r, dst)
			if err != nil || !res.Skipped || res.BytesSent != 0 || fi.Mode != 0o700 || fi.Owner() != "root:root" {
				t.Errorf("mode and owner change: %+v, %v, %+v; want them fixed without sending", res, err, fi)
			}

			// a transfer that broke after n bytes
			const n = 300<<10 + 777
			data, _ := os.ReadFile(src)
			if err := os.Remove(dst); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(part, data[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			res, err = Upload(ctx, r, LocalFile(src), size, sum, dst, 0o755, "")
			if err != nil || res.ResumedAt != n || res.BytesSent != size-n {
				t.Fatalf("resume: %+v, %v; want %d kept and %d sent", res, err, n, size-n)
			}
			sameFile(t, src, dst)
			if _, err := os.Stat(part); !os.IsNotExist(err) {
				t.Errorf("partial file left: %v", err)
			}

			// a partial file that is not a prefix of the source starts over
			bad := append([]byte(nil), data[:n]...)
			bad[n/2] ^= 0xff
			for _, junk := range [][]byte{bad, append(data, 'x')} {
				if err := os.Remove(dst); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(part, junk, 0o600); err != nil {
					t.Fatal(err)
				}
				res, err = Upload(ctx, r, LocalFile(src), size, sum, dst, 0o755, "")
				if err != nil || res.ResumedAt != 0 || res.BytesSent != size {
					t.Fatalf("corrupt partial (%d bytes): %+v, %v; want a full resend", len(junk), res, err)
				}
				sameFile(t, src, dst)
			}

			// new content replaces the old
			other, otherSum := testData(t, 1000)
			res, err = Upload(ctx, r, LocalFile(other), 1000, otherSum, dst, 0, "")
			if err != nil || res.Skipped || res.BytesSent != 1000 {
				t.Fatalf("replace: %+v, %v", res, err)
			}
			sameFile(t, other, dst)
			if fi, _ := Stat(ctx, r, dst); fi.Mode != 0o755 {
				t.Errorf("mode 0 should keep the replaced file's 0755, got %v", fi.Mode)
			}
		})
	}
}

func TestUploadRejects(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	src, sum := testData(t, 4096)
	for name, r := range f.uploadRunners(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), "f")
			wrong := strings.Repeat("ab", 32)
			_, err := Upload(ctx, r, LocalFile(src), 4096, wrong, dst, 0o644, "")
			if err == nil || !strings.Contains(err.Error(), "want "+wrong) || !strings.Contains(err.Error(), r.String()) {
				t.Errorf("wrong sha256: %v", err)
			}
			for _, p := range []string{dst, dst + PartSuffix} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s exists after a failed upload", p)
				}
			}
			if _, err := Upload(ctx, r, LocalFile(src), 5000, sum, dst, 0o644, ""); err == nil || !strings.Contains(err.Error(), "ended after 4096 of 5000") {
				t.Errorf("short source: %v", err)
			}
			if _, err := Upload(ctx, r, LocalFile(src), 4096, "xyz", dst, 0o644, ""); err == nil || !strings.Contains(err.Error(), "not a sha256") {
				t.Errorf("malformed sha256: %v", err)
			}
			// no sum given: Upload hashes the source itself (and resumes
			// from what the short-source attempt above left)
			res, err := Upload(ctx, r, LocalFile(src), 4096, "", dst, 0o644, "")
			if err != nil || res.ResumedAt+res.BytesSent != 4096 {
				t.Fatalf("upload without a sum: %+v, %v", res, err)
			}
			sameFile(t, src, dst)
		})
	}
}

// TestUploadLargeFlatMemory streams 64 MiB and watches the heap: it must
// not grow with the file.
func TestUploadLargeFlatMemory(t *testing.T) {
	f := sshd(t)
	const size = 64 << 20
	src, sum := testData(t, size)
	runners := map[string]Runner{
		"sftp": connect(t, f.sshHost(userNoPW), f.opts(nil, nil)),
		"cat":  plainRunner{connect(t, f.sshHost(userNoPW), f.opts(nil, nil))},
	}
	for name, r := range runners {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "big")
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				var m runtime.MemStats
				for {
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			res, err := Upload(context.Background(), r, LocalFile(src), size, sum, dst, 0o644, "")
			close(stop)
			<-sampled
			if err != nil || res.BytesSent != size {
				t.Fatalf("upload: %+v, %v", res, err)
			}
			grew := int64(peak.Load()) - int64(base.HeapInuse)
			t.Logf("heap grew by %.1f MiB at most", float64(grew)/(1<<20))
			if grew > 24<<20 {
				t.Errorf("heap grew by %d MiB while streaming %d MiB", grew>>20, size>>20)
			}
			if got, ok, err := FileSHA256(context.Background(), r, dst); got != sum || !ok || err != nil {
				t.Errorf("sha256 on the host = %s, %v, %v", got, ok, err)
			}
		})
	}
}

// BenchmarkUpload measures throughput to the local sshd, SFTP against cat.
func BenchmarkUpload(b *testing.B) {
	f := sshd(b)
	const size = 16 << 20
	src, sum := testData(b, size)
	for _, mode := range []string{"sftp", "cat"} {
		b.Run(mode, func(b *testing.B) {
			c, err := Connect(context.Background(), f.sshHost(userNoPW), f.opts(nil, nil))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var r Runner = c
			if mode == "cat" {
				r = plainRunner{c}
			}
			dst := filepath.Join(b.TempDir(), "bench")
			b.SetBytes(size)
			for b.Loop() {
				if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
					b.Fatal(err)
				}
				if _, err := Upload(context.Background(), r, LocalFile(src), size, sum, dst, 0o644, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cancelAfter cancels a context once n bytes were read through it and
// some of them reached the partial file: a transfer that breaks half way.
// Waiting for the file keeps a slow host (its shell not started yet, the
// bytes still in SSH's window) from turning the break into one before any
// byte arrived.
type cancelAfter struct {
	r      io.ReadCloser
	n      int64
	part   string
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= int64(n); c.n <= 0 {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if fi, err := os.Stat(c.part); err == nil && fi.Size() > 0 {
				break
			}
		}
		c.cancel()
	}
	return n, err
}

func (c *cancelAfter) Close() error { return c.r.Close() }

func TestUploadResumesAfterABrokenTransfer(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	const size = 4 << 20
	src, sum := testData(t, size)
	for name, r := range map[string]Runner{
		"sftp": connect(t, f.sshHost(userNoPW), f.opts(nil, nil)),
		"cat":  plainRunner{connect(t, f.sshHost(userNoPW), f.opts(nil, nil))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), "f")
			ctx, cancel := context.WithCancel(context.Background())
			breaking := func() (io.ReadCloser, error) {
				in, err := os.Open(src)
				return &cancelAfter{r: in, n: 3 << 19, part: dst + PartSuffix, cancel: cancel}, err
			}
			if _, err := Upload(ctx, r, breaking, size, sum, dst, 0o644, ""); err == nil {
				t.Fatal("the broken upload succeeded")
			}
			fi, err := os.Stat(dst + PartSuffix)
			if err != nil || fi.Size() == 0 {
				t.Fatalf("no partial file after the break: %v", err)
			}
			res, err := Upload(context.Background(), r, LocalFile(src), size, sum, dst, 0o644, "")
			if err != nil || res.ResumedAt != fi.Size() || res.BytesSent != size-fi.Size() {
				t.Fatalf("resume: %+v, %v; want %d kept", res, err, fi.Size())
			}
			sameFile(t, src, dst)
		})
	}
}

func TestOpenSFTPAndFallback(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	for name, c := range f.fileConns(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := c.OpenSFTP(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// root's home is not readable by the login user: this is root
			if _, err := s.ReadDir("/root"); err != nil {
				t.Errorf("sftp as root: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	// a host without sftp-server: Upload falls back to cat
	c := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	c.sftpFound, c.sftpPath = true, ""
	if _, err := c.OpenSFTP(ctx); !errors.Is(err, ErrNoSFTP) {
		t.Fatalf("OpenSFTP = %v; want ErrNoSFTP", err)
	}
	src, sum := testData(t, 100000)
	dst := filepath.Join(t.TempDir(), "f")
	if res, err := Upload(ctx, c, LocalFile(src), 100000, sum, dst, 0o644, ""); err != nil || res.BytesSent != 100000 {
		t.Fatalf("upload without sftp: %+v, %v", res, err)
	}
	sameFile(t, src, dst)
}

// smallDisk mounts a tmpfs of size bytes for the test: a filesystem an
// upload can fill.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "mode=0755,size="+strconv.Itoa(size)); err != nil {
		t.Fatalf("mounting a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// fillAfter fills a filesystem once n bytes were read through it: another
// writer takes the disk while the transfer runs.
type fillAfter struct {
	r      io.ReadCloser
	n      int64
	filler string
	filled bool
}

func (f *fillAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.n -= int64(n); f.n <= 0 && !f.filled {
		f.filled = true
		w, ferr := os.Create(f.filler)
		if ferr == nil {
			zero := make([]byte, 64<<10)
			for ferr == nil {
				_, ferr = w.Write(zero) // until the disk is full
			}
			_ = w.Close()
		}
	}
	return n, err
}

func (f *fillAfter) Close() error { return f.r.Close() }

// TestUploadRefusesWhatDoesNotFit: a file the destination's filesystem has
// no room for is refused before a byte is written, naming the host and the
// directory; one that fits goes in.
func TestUploadRefusesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	disk := smallDisk(t, 1<<20)
	src, sum := testData(t, 2<<20)
	small, smallSum := testData(t, 64<<10)
	for name, r := range f.uploadRunners(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(disk, strings.NewReplacer(" ", "-", ",", "").Replace(name), "sub")
			dst := filepath.Join(dir, "big")
			_, err := Upload(ctx, r, LocalFile(src), 2<<20, sum, dst, 0o644, "")
			if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), r.String()) {
				t.Fatalf("an upload twice the disk's size: %v; want a refusal naming the host and %s", err, dir)
			}
			for _, p := range []string{dst, dst + PartSuffix} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s exists after the refusal", p)
				}
			}
			if _, err := Upload(ctx, r, LocalFile(small), 64<<10, smallSum, filepath.Join(dir, "small"), 0o644, ""); err != nil {
				t.Fatalf("a file that fits: %v", err)
			}
		})
	}
}

// TestUploadResumesAfterTheDiskFilled: a disk that fills during the
// transfer fails it with an error that says so, keeps what arrived and
// places nothing; once space is freed the next upload resumes.
func TestUploadResumesAfterTheDiskFilled(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	const size = 8 << 20
	src, sum := testData(t, size)
	for name, r := range map[string]Runner{
		"sftp": connect(t, f.sshHost(userNoPW), f.opts(nil, nil)),
		"cat":  plainRunner{connect(t, f.sshHost(userNoPW), f.opts(nil, nil))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			disk := smallDisk(t, 12<<20)
			dst, filler := filepath.Join(disk, "f"), filepath.Join(disk, "filler")
			filling := func() (io.ReadCloser, error) {
				in, err := os.Open(src)
				return &fillAfter{r: in, n: 6 << 20, filler: filler}, err
			}
			_, err := Upload(context.Background(), r, filling, size, sum, dst, 0o644, "")
			if err == nil || !strings.Contains(err.Error(), "filled during the transfer") || !strings.Contains(err.Error(), r.String()) {
				t.Fatalf("an upload into a disk that filled: %v", err)
			}
			t.Logf("the error: %v", err)
			if _, err := os.Stat(dst); !os.IsNotExist(err) {
				t.Fatalf("%s was placed after the disk filled: %v", dst, err)
			}
			fi, err := os.Stat(dst + PartSuffix)
			if err != nil || fi.Size() == 0 || fi.Size() >= size {
				t.Fatalf("the partial file after the disk filled: %v, %v", fi, err)
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			res, err := Upload(context.Background(), r, LocalFile(src), size, sum, dst, 0o644, "")
			if err != nil || res.ResumedAt != fi.Size() || res.BytesSent != size-fi.Size() {
				t.Fatalf("resume once space was freed: %+v, %v; want %d kept", res, err, fi.Size())
			}
			sameFile(t, src, dst)
		})
	}
}
