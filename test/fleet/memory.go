package fleet

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemAvailableMiB reads MemAvailable from /proc/meminfo: what a backend
// checks a fleet against before it starts any host.
func MemAvailableMiB() (int, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.Atoi(fields[1])
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: %q: %w", sc.Text(), err)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
}
