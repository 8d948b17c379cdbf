package host

import (
	goflag "flag" // the package has a flag func of its own (relay.go)
	"strconv"
)

// wideParallel is how many tests run at once when -parallel is not given.
// Much of each test waits: on processes, the disk, a deadline. go test's
// default, GOMAXPROCS, kept 2 tests going on a 2-core machine, and the
// relay tests, one at a time, hold their slots while they wait their turn
// (the package took 321 s so under load, 157 s with 8).
const wideParallel = 8

// widenParallel sets -parallel to wideParallel unless the command line set
// it. TestMain calls it before m.Run, which reads the flag.
func widenParallel() {
	goflag.Parse()
	given := false
	goflag.Visit(func(f *goflag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = goflag.Set("test.parallel", strconv.Itoa(wideParallel))
	}
}
