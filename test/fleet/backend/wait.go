package backend

import (
	"errors"
	"strings"
	"sync"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// WaitAll runs wait for every host at once (the wall time is the slowest
// host, not the sum) and returns when all have returned: every host's
// outcome is reported, and the error joins the failures.
func WaitAll(hosts []fleet.Host, wait func(fleet.Host) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := wait(h); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// WrongKeys reports whether an SSH error is the fleet key refused or a
// host key not the one known: not a matter of time, so waiting longer for
// the host will not help.
func WrongKeys(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "unable to authenticate") || strings.Contains(err.Error(), "knownhosts"))
}
