package node

import "fmt"

// HumanBytes renders a byte count for people: "79.5 MiB", with binary
// units, one decimal, and counts under 1 KiB as "N bytes" ("0 bytes" is
// what a converged run's summary has always said, and scripts grep for it).
func HumanBytes(n int64) string {
	const unit = 1024
	switch {
	case n == 1:
		return "1 byte"
	case n < unit:
		return fmt.Sprintf("%d bytes", n)
	}
	v, exp := float64(n)/unit, 0
	// 1023.95 and up would print as "1024.0": that is the next unit's 1.0.
	for v >= unit-0.05 && exp < len(byteUnits)-1 {
		v /= unit
		exp++
	}
	return fmt.Sprintf("%.1f %s", v, byteUnits[exp])
}

var byteUnits = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
