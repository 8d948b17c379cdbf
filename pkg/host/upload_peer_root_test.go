package host

// Upload with ViaPeer: when the peer function is asked, and what Upload
// does with each of its answers.

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noSource fails the test when Upload opens it: a relayed upload must not
// read the file here.
func noSource(t *testing.T) Source {
	return func() (io.ReadCloser, error) {
		t.Error("the source was opened")
		return nil, errors.New("this source is not to be opened")
	}
}

// peerFn is a ViaPeer function that counts its calls.
type peerFn struct {
	calls int
	fn    func(ctx context.Context, part string) (PeerOutcome, error)
}

func (p *peerFn) opt() UploadOption {
	return ViaPeer(func(ctx context.Context, part string, _ int64) (PeerOutcome, error) {
		p.calls++
		return p.fn(ctx, part)
	})
}

// TestViaPeerSent_Root: a relay fills the partial file from another host;
// Upload checks and places it without opening the source or sending a
// byte from here.
func TestViaPeerSent_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	relayTurn(t)
	ctx := context.Background()
	const size = 2<<20 + 3
	src, sum := testData(t, size)
	r := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	from := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	before := f.keepKeys(t)
	to, peer := f.relayPeer(t, "root")
	dst := filepath.Join(t.TempDir(), "opt", "engine")
	p := &peerFn{fn: func(ctx context.Context, part string) (PeerOutcome, error) {
		if _, err := Relay(ctx, from, "127.0.0.1", src, to, peer, part, size); err != nil {
			return PeerFailed, err
		}
		return PeerSent, nil
	}}
	owner := userNoSudo + ":" + userNoSudo
	res, err := Upload(ctx, r, noSource(t), size, sum, dst, 0o750, owner, p.opt())
	if err != nil || !res.Relayed || res.BytesSent != 0 || res.ResumedAt != 0 || res.PeerErr != nil || p.calls != 1 {
		t.Fatalf("Upload = %+v, %v (%d calls); want relayed, nothing sent from here", res, err, p.calls)
	}
	sameFile(t, src, dst)
	if fi, _ := Stat(ctx, r, dst); fi.Mode != 0o750 || fi.Owner() != owner {
		t.Errorf("placed file: %+v; want 0750 %s", fi, owner)
	}
	if _, err := os.Stat(dst + PartSuffix); !os.IsNotExist(err) {
		t.Errorf("partial file left: %v", err)
	}
	sameBytes(t, f.authorizedKeys(), before)

	// in place already: skipped, the peer not asked
	res, err = Upload(ctx, r, noSource(t), size, sum, dst, 0o750, owner, p.opt())
	if err != nil || !res.Skipped || res.Relayed || p.calls != 1 {
		t.Errorf("second Upload = %+v, %v (%d calls); want a skip", res, err, p.calls)
	}
}

// TestViaPeerDeclinedAndFailed_Root: no peer, a relay that fails after
// some right bytes, one that fails after wrong bytes, and one whose bytes
// do not check out: Upload sends from here, resuming what matches, and
// reports the relay's error.
func TestViaPeerDeclinedAndFailed_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	const size = 1<<20 + 99
	src, sum := testData(t, size)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	r := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	const n = 300 << 10
	wrong := append([]byte(nil), data...)
	wrong[n/2] ^= 0xff
	for name, tc := range map[string]struct {
		outcome  PeerOutcome
		err      error
		writes   []byte // what the relay leaves in the partial file
		resumed  int64
		wantPeer string // in PeerErr; "" for none
	}{
		"declined":             {PeerDeclined, nil, nil, 0, ""},
		"failed half way":      {PeerFailed, errors.New("peer node-2 went away"), data[:n], n, "node-2 went away"},
		"failed, wrong bytes":  {PeerFailed, errors.New("peer node-2 went away"), wrong[:n], 0, "node-2 went away"},
		"failed without error": {PeerFailed, nil, nil, 0, "relay failed"},
		"an error, any answer": {PeerSent, errors.New("peer node-3 refused"), nil, 0, "node-3 refused"},
		"sent, wrong bytes":    {PeerSent, nil, wrong, 0, "did not check out"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), "f")
			p := &peerFn{fn: func(_ context.Context, part string) (PeerOutcome, error) {
				if tc.writes != nil {
					if err := os.WriteFile(part, tc.writes, 0o600); err != nil {
						t.Error(err)
					}
				}
				return tc.outcome, tc.err
			}}
			res, err := Upload(ctx, r, LocalFile(src), size, sum, dst, 0o644, "", p.opt())
			if err != nil || res.Relayed || p.calls != 1 || res.ResumedAt != tc.resumed || res.BytesSent != size-tc.resumed {
				t.Fatalf("Upload = %+v, %v (%d calls); want %d resumed, the rest sent from here", res, err, p.calls, tc.resumed)
			}
			if tc.wantPeer == "" && res.PeerErr != nil || tc.wantPeer != "" && (res.PeerErr == nil || !strings.Contains(res.PeerErr.Error(), tc.wantPeer)) {
				t.Errorf("PeerErr = %v; want %q", res.PeerErr, tc.wantPeer)
			}
			sameFile(t, src, dst)
		})
	}
}

// TestViaPeerNotForAResumablePart_Root: a partial file from an earlier
// run that matches the source is resumed from here; a relay would start
// it over. One that does not match is left to the relay.
func TestViaPeerNotForAResumablePart_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	ctx := context.Background()
	const size = 1 << 20
	src, sum := testData(t, size)
	data, _ := os.ReadFile(src)
	r := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	dst := filepath.Join(t.TempDir(), "f")
	const n = 100<<10 + 1
	if err := os.WriteFile(dst+PartSuffix, data[:n], 0o600); err != nil {
		t.Fatal(err)
	}
	p := &peerFn{fn: func(context.Context, string) (PeerOutcome, error) {
		t.Error("the peer was asked for a resumable upload")
		return PeerDeclined, nil
	}}
	res, err := Upload(ctx, r, LocalFile(src), size, sum, dst, 0o644, "", p.opt())
	if err != nil || res.ResumedAt != n || res.BytesSent != size-n || res.Relayed {
		t.Fatalf("Upload = %+v, %v; want %d resumed from here", res, err, n)
	}
	sameFile(t, src, dst)

	// a partial file that is not a prefix: the relay starts it over
	if err := os.WriteFile(dst+PartSuffix, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dst); err != nil {
		t.Fatal(err)
	}
	p.fn = func(_ context.Context, part string) (PeerOutcome, error) {
		return PeerSent, os.WriteFile(part, data, 0o600)
	}
	res, err = Upload(ctx, r, LocalFile(src), size, sum, dst, 0o644, "", p.opt())
	if err != nil || !res.Relayed || res.BytesSent != 0 || p.calls != 1 {
		t.Fatalf("Upload over a junk partial file = %+v, %v (%d calls); want relayed", res, err, p.calls)
	}
	sameFile(t, src, dst)
}

// TestViaPeerNoRoom_Root: a file the filesystem has no room for is
// refused before the peer is asked.
func TestViaPeerNoRoom_Root(t *testing.T) {
	t.Parallel()
	f := sshd(t)
	disk := smallDisk(t, 1<<20)
	_, sum := testData(t, 2<<20)
	r := connect(t, f.sshHost(userNoPW), f.opts(nil, nil))
	dst := filepath.Join(disk, "sub", "big")
	p := &peerFn{fn: func(context.Context, string) (PeerOutcome, error) {
		t.Error("the peer was asked to fill a disk too small")
		return PeerDeclined, nil
	}}
	_, err := Upload(context.Background(), r, noSource(t), 2<<20, sum, dst, 0o644, "", p.opt())
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Upload = %v; want a refusal", err)
	}
	for _, q := range []string{dst, dst + PartSuffix} {
		if _, err := os.Stat(q); !os.IsNotExist(err) {
			t.Errorf("%s exists after the refusal", q)
		}
	}
}
