package pkgfile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChecksumsRoundTripSorted(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	c := Checksums{"os/1/x": a, "files/0/y": b}
	data := c.Marshal()
	assert.Equal(t, b+"  files/0/y\n"+a+"  os/1/x\n", string(data))
	got, err := ParseChecksums(data)
	require.NoError(t, err)
	assert.Equal(t, c, got)
}

func TestParseChecksumsRefusesMalformedLists(t *testing.T) {
	a := strings.Repeat("a", 64)
	cases := map[string]string{
		"short digest":     "abc  files/0/x\n",
		"upper-case hex":   strings.ToUpper(a) + "  files/0/x\n",
		"one space":        a + " files/0/x\n",
		"escaping name":    a + "  ../x\n",
		"absolute name":    a + "  /etc/passwd\n",
		"unknown dir":      a + "  other/0/x\n",
		"unsorted":         a + "  os/0/x\n" + a + "  files/0/x\n",
		"duplicate":        a + "  os/0/x\n" + a + "  os/0/x\n",
		"the manifest":     a + "  manifest.yaml\n",
		"dot path segment": a + "  files/./x\n",
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseChecksums([]byte(data))
			require.Error(t, err)
			assert.ErrorContains(t, err, "checksums.txt line")
		})
	}
}
