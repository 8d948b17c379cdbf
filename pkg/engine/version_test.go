package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Outputs exactly as docs/reference/engines.md 2 quotes them.
func TestParseVersionRealOutputs(t *testing.T) {
	cases := []struct {
		name, output string
		want         Version
		str          string
	}{
		{"k3s --version", "k3s version v1.32.3+k3s1 (079ffa8d)\ngo version go1.23.6\n",
			Version{Major: 1, Minor: 32, Patch: 3, Build: "k3s1", Engine: "k3s", Rev: 1}, "v1.32.3+k3s1"},
		{"k3s rc", "k3s version v1.30.13-rc1+k3s1 (e77f78ee)\ngo version go1.23.8\n",
			Version{Major: 1, Minor: 30, Patch: 13, Pre: "rc1", Build: "k3s1", Engine: "k3s", Rev: 1}, "v1.30.13-rc1+k3s1"},
		{"rke2 --version", "rke2 version v1.34.3+rke2r3 (7598946e0086a9131564ccbb3c142b3fa54516ad)\ngo version go1.24.11 X:boringcrypto\n",
			Version{Major: 1, Minor: 34, Patch: 3, Build: "rke2r3", Engine: "rke2", Rev: 3}, "v1.34.3+rke2r3"},
		{"kubeadm version -o short", "v1.33.3\n", Version{Major: 1, Minor: 33, Patch: 3}, "v1.33.3"},
		{"kubeadm version", `kubeadm version: &version.Info{Major:"1", Minor:"33", EmulationMajor:"", EmulationMinor:"", MinCompatibilityMajor:"", MinCompatibilityMinor:"", GitVersion:"v1.33.3", GitCommit:"80779bd6ff08b451e1c165a338a7b69351e9b0b8", GitTreeState:"clean", BuildDate:"2025-07-15T18:05:14Z", GoVersion:"go1.24.4", Compiler:"gc", Platform:"linux/amd64"}`,
			Version{Major: 1, Minor: 33, Patch: 3}, "v1.33.3"},
		{"kubelet --version", "Kubernetes v1.33.3\n", Version{Major: 1, Minor: 33, Patch: 3}, "v1.33.3"},
		{"node kubeletVersion", "v1.26.4+rke2r1", Version{Major: 1, Minor: 26, Patch: 4, Build: "rke2r1", Engine: "rke2", Rev: 1}, "v1.26.4+rke2r1"},
		{"spec.version k3s", "1.35.3-k3s1", Version{Major: 1, Minor: 35, Patch: 3, Build: "k3s1", Engine: "k3s", Rev: 1}, "v1.35.3+k3s1"},
		{"spec.version plus form", "v1.35.3+k3s1", Version{Major: 1, Minor: 35, Patch: 3, Build: "k3s1", Engine: "k3s", Rev: 1}, "v1.35.3+k3s1"},
		{"spec.version rke2", "1.35.4-rke2r1", Version{Major: 1, Minor: 35, Patch: 4, Build: "rke2r1", Engine: "rke2", Rev: 1}, "v1.35.4+rke2r1"},
		{"image tag rc", "v1.24.3-rc1-rke2r1", Version{Major: 1, Minor: 24, Patch: 3, Pre: "rc1", Build: "rke2r1", Engine: "rke2", Rev: 1}, "v1.24.3-rc1+rke2r1"},
		{"old k3s", "v1.17.0+k3s.1", Version{Major: 1, Minor: 17, Patch: 0, Build: "k3s.1", Engine: "k3s", Rev: 1}, "v1.17.0+k3s.1"},
		{"k3s dev build", "v1.31.3+k3s-c88e217f", Version{Major: 1, Minor: 31, Patch: 3, Build: "k3s-c88e217f", Engine: "k3s"}, "v1.31.3+k3s-c88e217f"},
		{"upstream spec.version", "1.35.3", Version{Major: 1, Minor: 35, Patch: 3}, "v1.35.3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseVersion(tc.output)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
			assert.Equal(t, tc.str, v.String())
			back, err := ParseVersion(v.String())
			require.NoError(t, err)
			assert.Equal(t, 0, Compare(v, back), "String() parses back to the same version")
		})
	}
}

func TestParseVersionRefuses(t *testing.T) {
	_, err := ParseVersion("")
	require.ErrorIs(t, err, ErrNotInstalled)
	_, err = ParseVersion("  \n")
	require.ErrorIs(t, err, ErrNotInstalled)
	for _, out := range []string{
		"k3s version dev (HEAD)\ngo version go1.23.6", // a build without ldflags
		"go version go1.23.6",
		"command not found",
		"1.35",
	} {
		_, err := ParseVersion(out)
		require.Error(t, err, out)
		assert.NotErrorIs(t, err, ErrNotInstalled, out)
	}
}

func TestCompareOrdersRevisionsNumerically(t *testing.T) {
	ordered := []string{
		"v1.34.9+rke2r1",
		"v1.35.3-rc1+rke2r1",
		"v1.35.3-rc2+rke2r1",
		"v1.35.3-rc10+rke2r1",
		"v1.35.3+rke2r1",
		"v1.35.3+rke2r2",
		"v1.35.3+rke2r9",
		"v1.35.3+rke2r10", // after r9: the earlier tool compared these as text
		"v1.35.4+rke2r1",
		"v1.36.0+rke2r1",
		"v2.0.0+rke2r1",
	}
	for i := range ordered {
		for j := range ordered {
			a, err := ParseVersion(ordered[i])
			require.NoError(t, err)
			b, err := ParseVersion(ordered[j])
			require.NoError(t, err)
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			assert.Equal(t, want, Compare(a, b), "%s vs %s", ordered[i], ordered[j])
			assert.Equal(t, want, a.Compare(b))
		}
	}

	mustCmp := func(a, b string) int {
		va, err := ParseVersion(a)
		require.NoError(t, err)
		vb, err := ParseVersion(b)
		require.NoError(t, err)
		return Compare(va, vb)
	}
	assert.Equal(t, -1, mustCmp("v1.35.3+k3s1", "v1.35.3+k3s2"))
	assert.Equal(t, -1, mustCmp("1.35.3", "1.36.0"))
	assert.Equal(t, 0, mustCmp("1.35.3-k3s1", "v1.35.3+k3s1"), "both spellings of spec.version are one version")
	assert.Equal(t, -1, mustCmp("k3s version v1.35.3+k3s1 (079ffa8d)", "1.35.3-k3s2"), "installed vs packaged")
}

func TestCheckUpgradeStep(t *testing.T) {
	v := func(s string) Version {
		out, err := ParseVersion(s)
		require.NoError(t, err)
		return out
	}
	assert.NoError(t, CheckUpgradeStep(v("1.34.6"), v("1.35.3")), "one minor")
	assert.NoError(t, CheckUpgradeStep(v("1.35.3"), v("1.35.4")), "a patch")
	assert.NoError(t, CheckUpgradeStep(v("1.35.3+k3s1"), v("1.35.3-k3s2")), "a re-release")
	assert.NoError(t, CheckUpgradeStep(v("1.35.3"), v("1.35.3")), "the same")
	assert.NoError(t, CheckUpgradeStep(v("1.35.3"), v("1.33.1")), "a downgrade is refused elsewhere")
	err := CheckUpgradeStep(v("v1.33.3"), v("1.35.3"))
	require.Error(t, err)
	assert.Equal(t, "v1.33.3 to v1.35.3 skips minor version 1.34: upgrade one minor version at a time, with a 1.34 package first", err.Error())
	assert.Error(t, CheckUpgradeStep(v("1.35.3"), v("2.0.0")))
}
