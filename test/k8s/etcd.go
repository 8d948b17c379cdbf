package k8s

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// buildEtcd builds etcd and etcdctl into out. The etcd server's main
// package is the root of go.etcd.io/etcd/server/v3, so go build names it
// "server"; it is renamed etcd.
func buildEtcd(ctx context.Context, r Release, src, out string) error {
	v := "v" + r.Etcd
	b := goBuild{
		Dir:      filepath.Join(src, "etcd"),
		Require:  []string{"go.etcd.io/etcd/server/v3 " + v, "go.etcd.io/etcd/etcdctl/v3 " + v},
		Packages: []string{"go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3"},
		Out:      out,
		LDFlags:  "-s -w " + ldflagsX("go.etcd.io/etcd/api/v3/version.GitSHA="+v),
	}
	if err := b.run(ctx); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(out, "server"), filepath.Join(out, "etcd")); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}
