package store

import "github.com/colonel-byte/cargoship/test/engine/internal/kube"

// Merge takes records from a peer — the leader's pushes, or a periodic
// pull that catches a server up after it was away — keeping whichever
// version of each is newer, and returns how many changed this store.
// Under one leader resource versions only grow, so "newer" is simply the
// later write; the origin breaks a tie only if two servers ever led at
// once.
func (s *Store) Merge(recs []Record) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := 0
	for _, r := range recs {
		if r.RV > s.maxRV {
			s.maxRV = r.RV
		}
		cur, ok := s.recs[r.Key]
		if ok && !r.newer(cur) {
			continue
		}
		s.recs[r.Key] = r
		changed++
		switch {
		case r.Deleted && ok && !cur.Deleted:
			s.notifyLocked(Event{Type: "DELETED", Key: r.Key, RV: r.RV, Object: kube.DeepCopy(cur.Object)})
		case r.Deleted:
		case !ok || cur.Deleted:
			s.notifyLocked(Event{Type: "ADDED", Key: r.Key, RV: r.RV, Object: kube.DeepCopy(r.Object)})
		default:
			s.notifyLocked(Event{Type: "MODIFIED", Key: r.Key, RV: r.RV, Object: kube.DeepCopy(r.Object)})
		}
	}
	if changed > 0 {
		s.persistLocked()
	}
	return changed
}
