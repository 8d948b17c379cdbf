package version

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func stamp(mainVersion string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/colonel-byte/cargoship", Version: mainVersion}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestResolveFromVCSStamp(t *testing.T) {
	bi := stamp("(devel)", "vcs", "git", "vcs.revision", "5c69113abc", "vcs.time", "2026-12-01T10:00:00Z", "vcs.modified", "true")
	got := resolve(linked{}, bi, "go0", "linux/amd64")
	assert.Equal(t, Info{Version: Dev, Commit: "5c69113abc", Date: "2026-12-01T10:00:00Z", Modified: true,
		GoVersion: "go1.26.8", Platform: "linux/amd64"}, got)
}

func TestResolveLinkWins(t *testing.T) {
	bi := stamp("(devel)", "vcs.revision", "stamped", "vcs.time", "2026-01-01T00:00:00Z", "vcs.modified", "false")
	got := resolve(linked{"v1.2.3", "linkedsha", "2026-12-02T03:00:00Z"}, bi, "go0", "linux/arm64")
	assert.Equal(t, Info{Version: "v1.2.3", Commit: "linkedsha", Date: "2026-12-02T03:00:00Z",
		GoVersion: "go1.26.8", Platform: "linux/arm64"}, got)
}

func TestResolveModuleVersion(t *testing.T) {
	// go install github.com/colonel-byte/cargoship/cmd/cargoship@v0.3.0:
	// no VCS stamp, the module's version.
	got := resolve(linked{}, stamp("v0.3.0"), "go0", "linux/amd64")
	assert.Equal(t, "v0.3.0", got.Version)
	assert.Empty(t, got.Commit)
	assert.False(t, got.Modified)
}

func TestResolveNoBuildInfo(t *testing.T) {
	got := resolve(linked{}, nil, "go1.26.0", "linux/amd64")
	assert.Equal(t, Info{Version: Dev, GoVersion: "go1.26.0", Platform: "linux/amd64"}, got)
}

func TestText(t *testing.T) {
	got := Info{Version: "v1.2.3", Commit: "abc", Modified: true, GoVersion: "go1.26.8", Platform: "linux/amd64"}.Text()
	assert.Equal(t, "version:  v1.2.3\n"+
		"commit:   abc (modified)\n"+
		"date:     unknown\n"+
		"go:       go1.26.8\n"+
		"platform: linux/amd64\n", got)
}

// The test binary is built by go test, which stamps no VCS settings; Get
// still names this Go and platform.
func TestGetThisBinary(t *testing.T) {
	got := Get()
	require.NotEmpty(t, got.Version)
	assert.True(t, strings.HasPrefix(got.GoVersion, "go"), got.GoVersion)
	assert.Contains(t, got.Platform, "/")
	assert.Equal(t, got.Version, String())
}
