package k8s

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/internal/testtier"
)

// slowWhy is what makes this package's slow tests slow.
const slowWhy = "builds Kubernetes, etcd, CoreDNS, containerd and the CNI plugins from source (about 40 minutes a release the first time, cached after)"

// buildTimeout bounds one release's build from nothing.
const buildTimeout = 2 * time.Hour

var (
	buildsMu sync.Mutex
	builds   = map[string]*Artifacts{}
)

// built is release r's build, made or found in the cache once per test
// binary.
func built(t *testing.T, r Release) *Artifacts {
	t.Helper()
	testtier.Slow(t, slowWhy)
	buildsMu.Lock()
	defer buildsMu.Unlock()
	if a, ok := builds[r.Kubernetes]; ok {
		return a
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	a, err := Build(ctx, r)
	require.NoError(t, err)
	builds[r.Kubernetes] = a
	return a
}

// output runs a command and returns its trimmed standard output and
// standard error together.
func output(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
	return strings.TrimSpace(string(out))
}

// pinnedReleases are the releases each slow test checks.
var pinnedReleases = []Release{V1_35_4, V1_34_4}
