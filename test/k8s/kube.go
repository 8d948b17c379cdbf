package k8s

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KubeCommands are the Kubernetes binaries a build makes, each from
// k8s.io/kubernetes/cmd/<name>.
var KubeCommands = []string{
	"kubeadm", "kubelet", "kubectl",
	"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
}

// kubeBuildTags are the tags Kubernetes' own build sets (hack/lib/golang.sh).
var kubeBuildTags = []string{"selinux", "notest", "grpcnotrace"}

// stagingModules reads the replace block of k8s.io/kubernetes's go.mod:
// every k8s.io module it takes from ./staging/src, which the module proxy
// serves as a release of its own (docs/reference/kubernetes-build.md §2).
func stagingModules(goModPath string) ([]string, error) {
	f, err := os.Open(goModPath)
	if err != nil {
		return nil, fmt.Errorf("staging modules: %w", err)
	}
	defer f.Close()
	var mods []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "replace "))
		if len(fields) == 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "./staging/src/") {
			mods = append(mods, fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("staging modules: %s: %w", goModPath, err)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("staging modules: %s has no replace into ./staging/src", goModPath)
	}
	return mods, nil
}

// kubeVersionLDFlags are the -X settings Kubernetes' hack/lib/version.sh
// makes, for both packages that carry the version (§2 of
// docs/reference/kubernetes-build.md).
func kubeVersionLDFlags(r Release, buildDate string) string {
	vars := [][2]string{
		{"gitVersion", "v" + r.Kubernetes},
		{"gitMajor", r.Major()},
		{"gitMinor", r.Minor()},
		{"gitTreeState", "clean"},
		{"buildDate", buildDate},
	}
	var sets []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		for _, v := range vars {
			sets = append(sets, pkg+"."+v[0]+"="+v[1])
		}
	}
	return "-s -w " + ldflagsX(sets...)
}

// buildKube builds every Kubernetes binary into out in one go build.
func buildKube(ctx context.Context, r Release, src, out string) error {
	mod, err := downloadModule(ctx, "k8s.io/kubernetes", "v"+r.Kubernetes)
	if err != nil {
		return err
	}
	staging, err := stagingModules(mod.GoMod)
	if err != nil {
		return err
	}
	replace := make([]string, 0, len(staging))
	for _, m := range staging {
		replace = append(replace, m+" => "+m+" "+r.StagingVersion())
	}
	pkgs := make([]string, 0, len(KubeCommands))
	for _, c := range KubeCommands {
		pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
	}
	b := goBuild{
		Dir:      filepath.Join(src, "kubernetes"),
		Require:  []string{"k8s.io/kubernetes v" + r.Kubernetes},
		Replace:  replace,
		Packages: pkgs,
		Out:      out,
		Tags:     kubeBuildTags,
		LDFlags:  kubeVersionLDFlags(r, mod.Time.Format("2006-01-02T15:04:05Z")),
	}
	return b.run(ctx)
}
