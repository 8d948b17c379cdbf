package phase

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// The engines call systemctl: an OpenRC host is refused in phase 4,
// naming the host, before anything is prepared on it.
func TestValidateHostsRefusesOpenRC(t *testing.T) {
	ctx := context.Background()
	p, h := validateWith(t, v1alpha1.EngineK3s, os.Getenv("PATH"))
	require.NoError(t, p.Prepare(ctx))
	require.NoError(t, p.Run(ctx), "a systemd host passes")

	h.OS = hostos.Detect(releaseFixture(t, "alpine-3.23.2"))
	h.Facts.Family, h.Facts.InitSystem = h.OS.Family, "openrc"
	err := p.Run(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kw0 runs openrc, not systemd")

	h.Facts.InitSystem = "" // ps missing: the family still tells
	err = p.Run(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kw0 runs OpenRC, not systemd")
}

func TestInitProblem(t *testing.T) {
	h := hostFor(v1alpha1.RoleWorker, v1alpha1.FamilyDebian, "amd64")
	h.Spec.Hostname = "kw1"
	for init, refused := range map[string]bool{"systemd": false, "": false, "openrc": true, "init": true} {
		h.Facts.InitSystem = init
		assert.Equal(t, refused, initProblem(h) != "", "init %q", init)
	}
}
