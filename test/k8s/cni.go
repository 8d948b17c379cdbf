package k8s

import (
	"context"
	"path/filepath"
)

// CNIPlugins are the reference CNI plugins a build makes, each from
// github.com/containernetworking/plugins/plugins/<path>.
var CNIPlugins = map[string]string{
	"bridge":     "main/bridge",
	"loopback":   "main/loopback",
	"host-local": "ipam/host-local",
	"portmap":    "meta/portmap",
}

// buildCNI builds the CNI plugins into out.
func buildCNI(ctx context.Context, r Release, src, out string) error {
	const mod = "github.com/containernetworking/plugins"
	v := "v" + r.CNIPlugins
	var pkgs []string
	for _, name := range sortedKeys(CNIPlugins) {
		pkgs = append(pkgs, mod+"/plugins/"+CNIPlugins[name])
	}
	b := goBuild{
		Dir:      filepath.Join(src, "cni"),
		Require:  []string{mod + " " + v},
		Packages: pkgs,
		Out:      out,
		LDFlags:  "-s -w " + ldflagsX(mod+"/pkg/utils/buildversion.BuildVersion="+v),
	}
	return b.run(ctx)
}
