package node

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{
		-5:              "-5 bytes",
		0:               "0 bytes",
		1:               "1 byte",
		1023:            "1023 bytes",
		1024:            "1.0 KiB",
		1536:            "1.5 KiB",
		83361792:        "79.5 MiB",
		1<<30 - 1:       "1.0 GiB",
		1 << 30:         "1.0 GiB",
		5 << 40:         "5.0 TiB",
		math.MaxInt64:   "8.0 EiB",
		286515200:       "273.2 MiB",
		3<<20 + 512<<10: "3.5 MiB",
	} {
		assert.Equal(t, want, HumanBytes(n), "HumanBytes(%d)", n)
	}
}
