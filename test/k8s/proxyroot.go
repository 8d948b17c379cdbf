package k8s

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// iptablesCommands are the names kube-proxy runs in iptables mode. Debian
// makes them alternatives (update-alternatives, which dpkg-deb -x does not
// run); the tree links them to the nf_tables backend, Debian 12's default.
var iptablesCommands = []string{
	"iptables", "iptables-save", "iptables-restore",
	"ip6tables", "ip6tables-save", "ip6tables-restore",
}

// buildProxyRootfs unpacks iptables and its libraries from Debian's
// packages into out/rootfs, links the iptables commands to their nft
// variants, and returns "package version" lines for what it used.
func buildProxyRootfs(ctx context.Context, debs debCache, out string) ([]string, error) {
	paths, err := debs.fetch(ctx, kubeProxyDebs)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(out, "rootfs")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("kube-proxy rootfs: %w", err)
	}
	if err := extractDebs(ctx, paths, root); err != nil {
		return nil, err
	}
	sbin := filepath.Join(root, "usr", "sbin")
	for _, c := range iptablesCommands {
		nft := strings.Replace(c, "tables", "tables-nft", 1)
		if _, err := os.Lstat(filepath.Join(sbin, nft)); err != nil {
			return nil, fmt.Errorf("kube-proxy rootfs: iptables has no usr/sbin/%s: %w", nft, err)
		}
		if err := os.Symlink(nft, filepath.Join(sbin, c)); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("kube-proxy rootfs: %w", err)
		}
	}
	versions := make([]string, len(paths))
	for i, p := range paths {
		versions[i] = kubeProxyDebs[i] + " " + debVersion(p)
	}
	return versions, nil
}
