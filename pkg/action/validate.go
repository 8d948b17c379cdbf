package action

import (
	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// loadCluster reads the inventory from memory when the caller holds it,
// from its file otherwise: one loader, so both refuse the same documents.
func loadCluster(o Options) (*v1alpha1.Cluster, v1alpha1.Findings, error) {
	if o.ClusterData != nil {
		return v1alpha1.ParseCluster(o.ClusterPath, o.ClusterData)
	}
	return v1alpha1.LoadClusterFile(o.ClusterPath)
}

// checkWithDistro checks the inventory against the definition it is applied
// with, by the rules `validate --distro` runs (docs/validate.md, "With a
// distro"), so a pair validate refuses never reaches a host either.
func checkWithDistro(o Options, d *v1alpha1.Distro) error {
	var findings v1alpha1.Findings
	if o.ClusterData != nil {
		findings = v1alpha1.ParseClusterWithDistro(o.ClusterPath, o.ClusterData, d, o.PackagePath)
	} else {
		var err error
		if findings, err = v1alpha1.LoadClusterFileWithDistro(o.ClusterPath, d, o.PackagePath); err != nil {
			return err
		}
	}
	for _, f := range findings.Warnings() {
		o.Log.Warn(f.String())
	}
	if findings.HasErrors() {
		return &v1alpha1.DocumentError{File: o.ClusterPath, Findings: findings}
	}
	return nil
}
