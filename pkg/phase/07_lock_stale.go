package phase

import (
	"fmt"
	"time"
)

// LockStaleEnv sets the age from which a lock is stale (docs/apply.md, The
// lock), as a Go duration: for an operator who wants a killed run's lock
// taken over sooner than a minute on, and for the fault tests, which would
// otherwise wait a minute for every lock a kill leaves. A holder touches
// its lock at half its own stale age, so every cargoship on a fleet should
// be given the same: a shorter one takes over a live holder's lock.
const LockStaleEnv = "CARGOSHIP_LOCK_STALE"

// lockStaleMin is the shortest stale age: the holder's touch, at half of
// it, goes over a connection that may be busy with an upload, and the age
// is read in whole seconds.
const lockStaleMin = 4 * time.Second

// lockStale is the stale age LockStaleEnv sets, or lockStaleAfter when it
// is unset or empty; a nil lookupEnv reads nothing.
func lockStale(lookupEnv func(string) (string, bool)) (time.Duration, error) {
	if lookupEnv == nil {
		return lockStaleAfter, nil
	}
	v, _ := lookupEnv(LockStaleEnv)
	if v == "" {
		return lockStaleAfter, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lockStaleMin {
		return 0, fmt.Errorf("%s=%q: want a duration of %s or more, such as 30s (docs/apply.md, The lock)", LockStaleEnv, v, lockStaleMin)
	}
	return d, nil
}
