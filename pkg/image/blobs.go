package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/colonel-byte/cargoship/pkg/fetch"
	"github.com/colonel-byte/cargoship/pkg/retry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// blobAttempts bounds how often a blob whose transfer broke off is fetched
// again, after 1s, then 2s; go-containerregistry already retries failed
// requests, not bodies.
const blobAttempts = 3

// ensureBlob puts the blob d into the cache unless a file of the right size
// is already there, and reports whether it was. The blob's digest is checked
// as it is stored; a cached blob is checked again when it is copied into an
// archive (see writeBlob), so the cache is read once per create.
func (p *Puller) ensureBlob(ctx context.Context, rp *remote.Puller, cache *fetch.Cache, r reference, d v1.Descriptor) (bool, error) {
	if size, ok := cache.Stat(d.Digest.Hex); ok && size == d.Size {
		return true, nil
	}
	err := retry.Do(ctx, retry.Policy{
		Wait: time.Second, MaxWait: blobAttempts * time.Second, Attempts: blobAttempts,
		Log: p.logger(), Level: slog.LevelWarn, Message: "blob transfer failed, retrying",
		Attrs: []any{"image", r.normalized, "blob", d.Digest.String()},
	}, func(ctx context.Context) error {
		err := p.fetchBlob(ctx, rp, cache, r, d)
		if permanent(err) {
			return retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("image %s: blob %s: %w", r.normalized, d.Digest, err)
	}
	return false, nil
}

func (p *Puller) fetchBlob(ctx context.Context, rp *remote.Puller, cache *fetch.Cache, r reference, d v1.Descriptor) (err error) {
	layer, err := rp.Layer(ctx, r.pull.Context().Digest(d.Digest.String()))
	if err != nil {
		return err
	}
	rc, err := layer.Compressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	bw, err := cache.Create()
	if err != nil {
		return err
	}
	defer bw.Abort()
	var dst io.Writer = bw
	if p.Progress != nil {
		task := p.Progress.Start(d.Digest.Hex[:12]+" "+r.normalized, d.Size)
		defer func() { task.Done(err) }()
		dst = io.MultiWriter(bw, task)
	}
	if _, err := io.Copy(dst, rc); err != nil {
		return err
	}
	if bw.Size() != d.Size {
		return fmt.Errorf("got %d bytes, the manifest says %d", bw.Size(), d.Size)
	}
	if _, _, err := bw.Commit(d.Digest.Hex); err != nil {
		return err
	}
	p.logger().Debug("blob stored", "image", r.normalized, "blob", d.Digest.String(), "bytes", d.Size)
	return nil
}

// permanent reports a registry answer that another attempt cannot change.
func permanent(err error) bool {
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode >= 400 && te.StatusCode < 500 && te.StatusCode != http.StatusTooManyRequests && te.StatusCode != http.StatusRequestTimeout
	}
	var mm *fetch.MismatchError
	return errors.As(err, &mm)
}
