package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

// PartSuffix names the file an upload streams into beside its destination;
// a transfer that breaks leaves it, and the next Upload resumes from it.
const PartSuffix = ".cargoship-part"

// Source opens the content to upload, from its start, each time it is
// called: Upload reads it once, or twice when a partial file on the host
// turns out not to match. It is never held in memory.
type Source func() (io.ReadCloser, error)

// LocalFile is a Source reading a file on this machine.
func LocalFile(name string) Source {
	return func() (io.ReadCloser, error) { return os.Open(name) }
}

// ReaderAtSource is a Source over size bytes of ra (a package entry, a
// byte slice).
func ReaderAtSource(ra io.ReaderAt, size int64) Source {
	return func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(ra, 0, size)), nil }
}

// UploadResult says what Upload did.
type UploadResult struct {
	// Skipped: the destination already held the content (its mode and
	// owner may have been fixed).
	Skipped bool
	// ResumedAt is how much of an earlier, broken transfer was kept.
	ResumedAt int64
	// BytesSent is how many bytes left this machine: 0 for a skip and
	// for a relay.
	BytesSent int64
	// Relayed: another host filled the partial file (ViaPeer).
	Relayed bool
	// PeerErr is why a relay failed, when Upload then sent from here.
	PeerErr error
}

// Upload puts size bytes from src, whose sha256 is sha256hex, at dst on the
// host as root. It skips a destination that already holds that content
// (fixing only mode and owner), streams into dst+PartSuffix otherwise,
// resuming a partial file whose bytes match the source, checks the sha256
// on the host and renames into place. An empty sha256hex makes Upload hash
// src first. mode 0 and owner "" mean as WriteFile's.
func Upload(ctx context.Context, r Runner, src Source, size int64, sha256hex, dst string, mode os.FileMode, owner string, opts ...UploadOption) (UploadResult, error) {
	u := &upload{r: r, src: src, size: size, sum: strings.ToLower(sha256hex), dst: dst, part: dst + PartSuffix}
	for _, o := range opts {
		o(u)
	}
	res, err := u.run(ctx, mode, owner)
	if err != nil {
		return res, fileError(r, "upload", dst, err)
	}
	return res, nil
}

// UploadOption changes how Upload sends.
type UploadOption func(*upload)

// WrapSend hands wrap the reader of exactly the bytes about to go over the
// wire, and offset, where they start in the file, before they are sent:
// the hashing of a resumed prefix and a skipped upload never reach it, so
// a counting wrapper counts what was sent (progress display, for one).
// wrap is called at most once per Upload, and not at all when nothing
// needs sending.
func WrapSend(wrap func(offset int64, r io.Reader) io.Reader) UploadOption {
	return func(u *upload) { u.wrap = wrap }
}

// PeerOutcome is what a ViaPeer function did.
type PeerOutcome int

const (
	// PeerDeclined: no peer holds the file; Upload sends it from here.
	PeerDeclined PeerOutcome = iota
	// PeerFailed: a relay failed; Upload sends from here, resuming what
	// the relay left when its bytes match, and returns the error in
	// UploadResult.PeerErr.
	PeerFailed
	// PeerSent: the partial file holds the bytes; Upload checks their
	// sha256 on the host and puts them in place. Bytes that do not check
	// out are removed and sent from here, as after PeerFailed.
	PeerSent
)

// ViaPeer offers fn the partial file to fill from another host (Relay)
// with size bytes before Upload sends from here. fn is asked after the
// skip check, once the filesystem is known to have room for the file
// twice over (a relayed file is checked and placed through a copy; see
// finishScript), and not when a partial file from an earlier run matches
// the source: resuming that from here sends less. With no partial file
// the Source is then never opened. An error from fn counts as PeerFailed.
func ViaPeer(fn func(ctx context.Context, part string, size int64) (PeerOutcome, error)) UploadOption {
	return func(u *upload) { u.peer = fn }
}

type upload struct {
	r          Runner
	wrap       func(offset int64, r io.Reader) io.Reader
	peer       func(ctx context.Context, part string, size int64) (PeerOutcome, error)
	src        Source
	size       int64
	sum        string
	dst, part  string
	mode       os.FileMode
	owner      string
	dstInfo    FileInfo
	dstExists  bool
	dstSum     string
	partExists bool
	partSize   int64
	// partRelayed: a relay wrote the partial file (its grant record is
	// beside it), and its sender may still hold it open.
	partRelayed bool
	dirOwner    string // "UID GID MODE" of the directory dst goes in
	free        int64  // bytes free beside the partial file; -1 unknown
}

func (u *upload) run(ctx context.Context, mode os.FileMode, owner string) (UploadResult, error) {
	if err := u.check(owner); err != nil {
		return UploadResult{}, err
	}
	if err := u.probe(ctx); err != nil {
		return UploadResult{}, err
	}
	if err := u.checkDir(); err != nil {
		return UploadResult{}, err
	}
	if u.dstExists && !u.dstInfo.IsRegular() {
		return UploadResult{}, fmt.Errorf("is a %s, not a regular file", fileKind(u.dstInfo))
	}
	u.mode, u.owner = settle(u.dstInfo, u.dstExists, mode, owner)
	if u.dstExists && u.dstSum == u.sum {
		return UploadResult{Skipped: true}, u.fixInPlace(ctx)
	}
	if err := u.dropRelayedPart(ctx); err != nil {
		return UploadResult{}, err
	}
	var res UploadResult
	var in io.ReadCloser
	var offset int64
	var err error
	if u.peer == nil || u.resumable() {
		if in, offset, err = u.resumePoint(ctx); err != nil {
			return res, err
		}
	}
	if u.peer != nil && offset == 0 {
		if in != nil {
			in.Close()
			in = nil
		}
		if done, err := u.relay(ctx, &res); done || err != nil {
			return res, err
		}
	}
	if in == nil {
		if in, offset, err = u.resumePoint(ctx); err != nil {
			return res, err
		}
	}
	defer in.Close()
	res.ResumedAt = offset
	if err := u.room(offset); err != nil {
		return res, err
	}
	if offset < u.size {
		res.BytesSent, err = u.send(ctx, in, offset)
		if err != nil {
			return res, u.outOfSpace(ctx, err)
		}
	}
	return res, u.finish(ctx)
}

// relay lets the peer function fill the partial file; done means the
// upload is complete. After a relay that failed, or whose bytes did not
// check out, the host is probed again: what it left in the partial file
// decides where sending from here starts.
func (u *upload) relay(ctx context.Context, res *UploadResult) (done bool, err error) {
	if err := u.room(0); err != nil {
		return false, err
	}
	if u.roomForCopy() != nil {
		return false, nil // room to send it from here, not to check a relayed copy
	}
	outcome, err := u.peer(ctx, u.part, u.size)
	if cerr := ctx.Err(); cerr != nil {
		return false, errors.Join(err, cerr)
	}
	switch {
	case err == nil && outcome == PeerDeclined:
		return false, nil
	case err == nil && outcome == PeerSent:
		ferr := u.finishScript(ctx, true)
		var ee *ExitError
		if !errors.As(ferr, &ee) || ee.Code != mismatchCode {
			res.Relayed = ferr == nil
			return true, ferr
		}
		err = fmt.Errorf("the relayed copy did not check out: %w", &commandError{ee})
	case err == nil:
		err = errors.New("the relay failed")
	}
	res.PeerErr = err
	if err := u.probe(ctx); err != nil {
		return false, err
	}
	return false, u.dropRelayedPart(ctx)
}

// dropRelayedPart removes a partial file a relay wrote, and its grant
// record, before anything is sent from here: its sender may still hold it
// open and write into it after the check, so it is never resumed, and
// what is sent from here goes into a new file.
func (u *upload) dropRelayedPart(ctx context.Context) error {
	if !u.partRelayed {
		return nil
	}
	if _, err := u.r.Sudo(ctx, Script(`rm -f -- "$1" "$1`+RelayGrantSuffix+`"`, u.part)); err != nil {
		return err
	}
	u.partExists, u.partSize, u.partRelayed = false, 0, false
	return nil
}

// roomForCopy is room for a relayed file: its partial file and the copy
// that is checked and placed, side by side for a moment.
func (u *upload) roomForCopy() error {
	if u.free < 0 {
		return nil
	}
	have := u.free
	if u.partExists {
		have += u.partSize
	}
	if 2*u.size <= have {
		return nil
	}
	return fmt.Errorf("no room for a relayed copy: %d bytes needed, %d free", 2*u.size, have)
}

// checkDir refuses a destination whose directory (or the nearest one that
// exists, which the upload's directories would go in) anyone but root may
// write: Upload works there as root, and such a user could plant a link
// at the partial file's fixed name, or swap a file between the check and
// the rename, and have root write, chown or chmod elsewhere. Such a
// directory is no place for a file root installs anyway: its writers can
// replace the file after it is placed.
func (u *upload) checkDir() error {
	if u.dirOwner == "" {
		return nil // a host that answers another probe (a test double's)
	}
	f := strings.SplitN(u.dirOwner, " ", 4)
	mode, err := strconv.ParseUint(f[min(2, len(f)-1)], 8, 32)
	if len(f) != 4 || err != nil {
		return fmt.Errorf("cannot tell who may write the directory it goes in: the host said %q", u.dirOwner)
	}
	uid, gid := f[0], f[1]
	if uid == "0" && mode&0o002 == 0 && (mode&0o020 == 0 || gid == "0") {
		return nil
	}
	return fmt.Errorf("%s (owner uid %s, group gid %s, mode %s) may be written by users other than root; cargoship writes files there as root and will not: make the directory root's and writable by root alone, or choose another destination",
		f[3], uid, gid, f[2])
}

// room refuses, before a byte is written, a transfer the filesystem that
// will hold the partial file has no room for: filling a host's disk to the
// brim harms what else runs there, and the upload would fail anyway. A
// restart from 0 gets the old partial file's space back.
func (u *upload) room(offset int64) error {
	if u.free < 0 {
		return nil // the host could not say; the write will
	}
	need, have := u.size-offset, u.free
	if offset == 0 && u.partExists {
		have += u.partSize
	}
	if need <= have {
		return nil
	}
	return fmt.Errorf("no space left: %s needs %d more bytes and its filesystem has %d free; nothing was written (free space there and run again)",
		path.Dir(u.part), need, have)
}

// outOfSpace explains a transfer that broke because the filesystem filled
// under it (SFTP reports a full disk only as a generic failure): what
// arrived stays in the partial file, for the next run to resume once
// there is room.
func (u *upload) outOfSpace(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	out, perr := u.r.Sudo(ctx, Script(`if [ -f "$1" ]; then printf 'part '; stat -c %s -- "$1"; fi
`+freeProbe, u.part))
	if perr != nil {
		return err // the host is gone too: the transfer's error says why
	}
	var arrived, free int64 = 0, -1
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "part":
			arrived, _ = strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		case "free":
			if n, ok := parseFree(val); ok {
				free = n
			}
		}
	}
	if free < 0 || free >= u.size-arrived {
		return err
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		// what the command said (fileError would show only that, and
		// drop the rest)
		err = errors.New((&commandError{ee}).Error())
	}
	return fmt.Errorf("no space left: the filesystem of %s filled during the transfer (%d bytes free, %d more needed); the %d bytes that arrived stay in %s for the next run to resume once there is room: %w",
		path.Dir(u.part), free, u.size-arrived, arrived, path.Base(u.part), err)
}

// check validates the arguments and hashes the source when no sum is given.
func (u *upload) check(owner string) error {
	if err := checkPath(u.dst); err != nil {
		return err
	}
	if err := checkOwner(owner); err != nil {
		return err
	}
	if u.size < 0 {
		return fmt.Errorf("size %d is negative", u.size)
	}
	if u.sum == "" {
		sum, n, err := hashSource(u.src, -1)
		if err != nil {
			return err
		}
		u.sum, u.size = sum, n
	}
	if !isSHA256(u.sum) {
		return fmt.Errorf("%q is not a sha256 in hex", u.sum)
	}
	return nil
}

// hashSource hashes the first n bytes of src (all of it for n < 0).
func hashSource(src Source, n int64) (string, int64, error) {
	in, err := src()
	if err != nil {
		return "", 0, fmt.Errorf("opening the source: %w", err)
	}
	defer in.Close()
	h := sha256.New()
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	got, err := io.Copy(h, r)
	if err != nil {
		return "", got, fmt.Errorf("reading the source: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), got, nil
}

// freeProbe prints the bytes free on the filesystem that holds (or will
// hold, once its directories are made) the file $1: free blocks times the
// block size, as root may use them. It prints "free" alone when stat
// cannot say.
const freeProbe = `d=$(dirname -- "$1"); while [ ! -d "$d" ]; do d=$(dirname -- "$d"); done
printf 'free '; stat -f -c '%f %S' -- "$d" 2>/dev/null || echo`

// uploadProbe reports the destination (stat, and sha256 when its size is
// right), the partial file's size and whether a relay wrote it, the owner
// and mode of the directory the file goes in (or the nearest one that
// exists), and the room beside it.
const uploadProbe = `if [ -e "$1" ] || [ -L "$1" ]; then
	printf 'dst '; ` + statFormat + `"$1"
	if [ -f "$1" ] && [ "$(stat -c %s -- "$1")" = "$3" ]; then printf 'sum '; sha256sum < "$1"; fi
fi
if [ -f "$2" ]; then printf 'part '; stat -c %s -- "$2"; fi
if [ -e "$2` + RelayGrantSuffix + `" ]; then echo relayed; fi
d=$(dirname -- "$1"); while [ ! -d "$d" ]; do d=$(dirname -- "$d"); done
printf 'dir %s %s\n' "$(stat -L -c '%u %g %a' -- "$d")" "$d"
set -- "$2"
` + freeProbe

// parseFree reads freeProbe's "BLOCKS BLOCKSIZE"; ok is false when the
// host could not say.
func parseFree(val string) (int64, bool) {
	f := strings.Fields(val)
	if len(f) != 2 {
		return 0, false
	}
	blocks, err1 := strconv.ParseInt(f[0], 10, 64)
	bsize, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || blocks < 0 || bsize <= 0 || blocks > (1<<62)/bsize {
		return 0, false
	}
	return blocks * bsize, true
}

// UploadProbeCommand is the command Upload first sends for size bytes to
// dst, for Prefetch.
func UploadProbeCommand(dst string, size int64) string {
	return Script(uploadProbe, dst, dst+PartSuffix, strconv.FormatInt(size, 10))
}

func (u *upload) probe(ctx context.Context) error {
	u.free, u.partExists, u.partSize, u.partRelayed, u.dirOwner = -1, false, 0, false, ""
	out, err := u.r.Sudo(ctx, UploadProbeCommand(u.dst, u.size))
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "dst":
			u.dstExists = true
			u.dstInfo, err = parseStat(val)
		case "sum":
			u.dstSum, err = parseSum(val)
		case "part":
			u.partExists = true
			u.partSize, err = strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		case "relayed":
			u.partRelayed = true
		case "dir":
			u.dirOwner = val
		case "free":
			if n, ok := parseFree(val); ok {
				u.free = n
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fixInPlace sets mode and owner of a destination whose content is right,
// and drops a leftover partial file.
func (u *upload) fixInPlace(ctx context.Context) error {
	if permBits(u.dstInfo.Mode) != permBits(u.mode) || !ownerMatches(u.owner, u.dstInfo) {
		if _, err := u.r.Sudo(ctx, Script(fixScript, u.dst, chmodArg(u.mode), u.owner)); err != nil {
			return err
		}
	}
	if u.partExists {
		if _, err := u.r.Sudo(ctx, Script(`rm -f -- "$1"`, u.part)); err != nil {
			return err
		}
	}
	return nil
}

// resumePoint opens the source where the transfer should continue: after
// the partial file's bytes when they match the source's, else at 0.
func (u *upload) resumePoint(ctx context.Context) (io.ReadCloser, int64, error) {
	in, err := u.src()
	if err != nil {
		return nil, 0, fmt.Errorf("opening the source: %w", err)
	}
	if !u.resumable() {
		return in, 0, nil
	}
	out, err := u.r.Sudo(ctx, Script(`sha256sum < "$1"`, u.part))
	if err != nil {
		in.Close()
		return nil, 0, err
	}
	hostSum, err := parseSum(out)
	if err != nil {
		in.Close()
		return nil, 0, err
	}
	h := sha256.New()
	if _, err := io.CopyN(h, in, u.partSize); err != nil {
		in.Close()
		return nil, 0, fmt.Errorf("reading the source: %w", err)
	}
	if hex.EncodeToString(h.Sum(nil)) == hostSum {
		return in, u.partSize, nil
	}
	// the partial file is not a prefix of this source: start over
	in.Close()
	if in, err = u.src(); err != nil {
		return nil, 0, fmt.Errorf("opening the source: %w", err)
	}
	return in, 0, nil
}

// resumable reports whether a partial file could be a prefix of the
// source, worth hashing to resume from.
func (u *upload) resumable() bool {
	return u.partExists && u.partSize > 0 && u.partSize <= u.size
}

// send streams the rest of the source into the partial file, over SFTP
// when the Runner offers it and the host has a server, else through cat.
func (u *upload) send(ctx context.Context, in io.Reader, offset int64) (int64, error) {
	src := io.LimitReader(in, u.size-offset)
	if u.wrap != nil {
		src = u.wrap(offset, src)
	}
	rest := &countingReader{r: src}
	var err error
	sent := false
	if o, ok := u.r.(SFTPOpener); ok {
		sent, err = u.sendSFTP(ctx, o, rest, offset)
	}
	if !sent && err == nil {
		err = u.sendCat(ctx, rest, offset)
	}
	if err == nil && rest.n < u.size-offset {
		err = fmt.Errorf("the source ended after %d of %d bytes", offset+rest.n, u.size)
	}
	return rest.n, err
}

// sendSFTP reports sent=false, with no error, when the host has no
// sftp-server and the caller should fall back to cat.
func (u *upload) sendSFTP(ctx context.Context, o SFTPOpener, rest io.Reader, offset int64) (sent bool, err error) {
	s, err := o.OpenSFTP(ctx)
	if errors.Is(err, ErrNoSFTP) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := s.MkdirAll(path.Dir(u.part)); err != nil {
		return true, fmt.Errorf("sftp: creating %s: %w", path.Dir(u.part), err)
	}
	flags := os.O_WRONLY | os.O_CREATE
	if offset == 0 {
		flags |= os.O_TRUNC
	}
	f, err := s.OpenFile(u.part, flags)
	if err != nil {
		return true, fmt.Errorf("sftp: opening %s: %w", u.part, err)
	}
	defer func() { _ = f.Close() }() // closed below; this covers the early returns
	// private until finish() sets the real mode: it may hold a secret
	if err := f.Chmod(0o600); err != nil {
		return true, fmt.Errorf("sftp: chmod %s: %w", u.part, err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return true, fmt.Errorf("sftp: seeking %s: %w", u.part, err)
	}
	// a LimitedReader lets ReadFrom keep many writes in flight; sftp-server
	// applies them in order, so a broken transfer still leaves a prefix
	if _, err := f.ReadFrom(&io.LimitedReader{R: rest, N: u.size - offset}); err != nil {
		return true, fmt.Errorf("sftp: writing %s: %w", u.part, err)
	}
	return true, f.Close()
}

// freshMtime touches "$2" after it was renamed into place: fapolicyd keys
// what it knows of a file, its path included, on inode, mtime and size,
// so a file read under its temporary name (the sha256 check above) would
// keep that name, and a path= rule naming where it now is would not
// match it (docs/reference/hosts.md §7.4).
const freshMtime = `touch -c -m -- "$2"`

// catScript appends stdin to the partial file, or starts it afresh.
const catScript = `set -e
` + mkdirs + `cs_mkdir "$(dirname -- "$1")"
umask 077
if [ "$2" = 0 ]; then cat > "$1"; else cat >> "$1"; fi`

func (u *upload) sendCat(ctx context.Context, rest io.Reader, offset int64) error {
	_, err := u.r.Sudo(ctx, Script(catScript, u.part, strconv.FormatInt(offset, 10)), WithStdin(rest))
	return err
}

// finishScript checks what arrived, then puts it in place, owner before
// mode (chown clears a setuid bit), gives it a new mtime (see
// freshMtime) and relabels it as WriteFile does. With $6 = 1 a relay
// wrote the partial file, and its sender may still hold it open: the
// bytes checked and placed are then a copy in a new root-only file no
// one else holds (a reflink where the filesystem has them), and the
// partial file and its grant record go.
const finishScript = `set -e
` + durable + `f=$1
if [ "$6" = 1 ]; then
	f=$(mktemp -- "$2.cargoship-XXXXXX")
	trap 'rm -f -- "$f"' EXIT
	cp --reflink=auto -- "$1" "$f"
	rm -f -- "$1" "$1` + RelayGrantSuffix + `"
fi
got=$(sha256sum < "$f")
got=${got%% *}
if [ "$got" != "$3" ]; then
	rm -f -- "$f"
	echo "what arrived has sha256 $got, want $3; the partial file is removed, run again" >&2
	exit 45 # mismatchCode
fi
[ -z "$5" ] || chown -- "$5" "$f"
chmod "$4" "$f"
cs_sync "$f"
mv -f -- "$f" "$2"
` + freshMtime + `
cs_sync "$(dirname -- "$2")"
p=$2
` + restorecon

// mismatchCode is finishScript's exit code for bytes that do not check
// out.
const mismatchCode = 45

func (u *upload) finish(ctx context.Context) error { return u.finishScript(ctx, false) }

func (u *upload) finishScript(ctx context.Context, relayed bool) error {
	_, err := u.r.Sudo(ctx, Script(finishScript, u.part, u.dst, u.sum, chmodArg(u.mode), u.owner, flag(relayed)))
	return err
}

// countingReader counts what passes through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
