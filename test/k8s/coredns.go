package k8s

import (
	"context"
	"path/filepath"
)

// buildCoreDNS builds coredns (its main package is the module's root, with
// the plugins of its plugin.cfg compiled in) into out.
func buildCoreDNS(ctx context.Context, r Release, src, out string) error {
	v := "v" + r.CoreDNS
	b := goBuild{
		Dir:      filepath.Join(src, "coredns"),
		Require:  []string{"github.com/coredns/coredns " + v},
		Packages: []string{"github.com/coredns/coredns"},
		Out:      out,
		LDFlags:  "-s -w " + ldflagsX("github.com/coredns/coredns/coremain.GitCommit="+v),
	}
	return b.run(ctx)
}
