package faults

import "time"

// lockStale is the lock's stale age for every run here (phase.LockStaleEnv;
// 60 s by default, docs/apply.md, The lock): the kills and the cut leave
// locks that would otherwise take a minute each to go stale. Run 2 must
// still find run 1's lock live: it reads it once the checks after the kill
// and its own start are done, and found it touched 10, 13 and 16 s before
// on two cores loaded 12 to 32 deep. 30 s leaves as much again.
const lockStale = 30 * time.Second
