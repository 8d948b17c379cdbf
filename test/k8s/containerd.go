package k8s

import (
	"context"
	"path/filepath"
)

// containerdTags build containerd without cgo: the btrfs snapshotter needs
// cgo, devmapper and zfs are of no use in a test fleet; netgo and osusergo
// are what containerd's own static release sets (its Makefile;
// docs/reference/kubernetes-build.md §3).
var containerdTags = []string{"urfave_cli_no_docs", "no_btrfs", "no_devmapper", "no_zfs", "osusergo", "netgo", "static_build"}

// buildContainerd builds containerd and ctr, then the runc shim with
// no_grpc as containerd's Makefile does, into out.
func buildContainerd(ctx context.Context, r Release, src, out string) error {
	const pkg = "github.com/containerd/containerd/v2"
	v := "v" + r.Containerd
	ld := "-s -w " + ldflagsX(pkg+"/version.Version="+v, pkg+"/version.Revision="+v, pkg+"/version.Package=github.com/containerd/containerd")
	dir := filepath.Join(src, "containerd")
	daemon := goBuild{
		Dir:      dir,
		Require:  []string{pkg + " " + v},
		Packages: []string{pkg + "/cmd/containerd", pkg + "/cmd/ctr"},
		Out:      out,
		Tags:     containerdTags,
		LDFlags:  ld,
	}
	if err := daemon.run(ctx); err != nil {
		return err
	}
	shim := daemon
	shim.Packages = []string{pkg + "/cmd/containerd-shim-runc-v2"}
	shim.Tags = append(append([]string{}, containerdTags...), "no_grpc")
	return shim.run(ctx)
}
