package action

import (
	"log/slog"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// checkWithDistro checks the inventory against the definition it is applied
// with, by the rules `validate --distro` runs (docs/validate.md, "With a
// distro"), so a pair validate refuses never reaches a host either.
func checkWithDistro(clusterPath string, d *v1alpha1.Distro, distro string, log *slog.Logger) error {
	findings, err := v1alpha1.LoadClusterFileWithDistro(clusterPath, d, distro)
	if err != nil {
		return err
	}
	for _, f := range findings.Warnings() {
		log.Warn(f.String())
	}
	if findings.HasErrors() {
		return &v1alpha1.DocumentError{File: clusterPath, Findings: findings}
	}
	return nil
}
