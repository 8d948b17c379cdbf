package container

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/k8s"
)

// kubeletBinary is the kubelet the NodeRuntime kubelet test runs:
// $CARGOSHIP_FLEET_KUBELET if set, else Kubernetes 1.35.4's from the
// test/k8s build, found in its cache, waited for while another process
// builds it (hack/test.sh's k8s-build tier), or built here (about 12
// minutes on two cores, then cached).
func kubeletBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CARGOSHIP_FLEET_KUBELET"); p != "" {
		if !fileExists(p) {
			t.Fatalf("CARGOSHIP_FLEET_KUBELET=%s: no such file", p)
		}
		return p
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	a, err := k8s.Build(ctx, k8s.V1_35_4)
	if err != nil {
		t.Fatalf("no kubelet: CARGOSHIP_FLEET_KUBELET is not set and the test/k8s build of %s failed: %v", k8s.V1_35_4.Kubernetes, err)
	}
	t.Logf("kubelet from the test/k8s build %s", a.Dir)
	return a.Path("kubelet")
}
