package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/host"
)

// KubeconfigMode is the mode of every kubeconfig cargoship writes: it
// holds the cluster's admin credentials.
const KubeconfigMode fs.FileMode = 0o600

// FetchKubeconfig reads a controller's admin kubeconfig and points it at
// the load balancer, for use from outside the cluster.
func FetchKubeconfig(ctx context.Context, r host.Runner, e engine.Engine, loadbalancer string) ([]byte, error) {
	if loadbalancer == "" {
		return nil, errors.New("the inventory names no spec.config.loadbalancer to point the kubeconfig at")
	}
	raw, err := host.ReadFile(ctx, r, e.Paths().Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the admin kubeconfig: %w", r, err)
	}
	out, err := engine.AdminKubeconfig(raw, engine.ServerURL(loadbalancer, e.APIPort()))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r, e.Paths().Kubeconfig, err)
	}
	return out, nil
}

// LocalFileCurrent says the local file at path already holds data at mode.
func LocalFileCurrent(path string, data []byte, mode fs.FileMode) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", path)
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return bytes.Equal(have, data) && fi.Mode().Perm() == mode, nil
}

// WriteLocalFile writes data to path on this machine at mode, atomically
// (a temp file in the same directory, renamed over it), and only when the
// file differs: changed is false when it was already current. A symlink
// is followed, so ~/.kube/config pointing elsewhere keeps pointing there.
func WriteLocalFile(path string, data []byte, mode fs.FileMode) (changed bool, err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	current, err := LocalFileCurrent(path, data, mode)
	if err != nil || current {
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	// CreateTemp makes the file 0600, so the content is never readable by
	// others, even for a moment.
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".cargoship-*")
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
