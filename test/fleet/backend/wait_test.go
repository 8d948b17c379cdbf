package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
)

func TestWaitAllJoinsEveryFailure(t *testing.T) {
	hosts := []fleet.Host{{Name: "kc0"}, {Name: "kw0"}, {Name: "kw1"}}
	err := WaitAll(hosts, func(h fleet.Host) error {
		if h.Name == "kc0" {
			return nil
		}
		return errors.New(h.Name + " failed")
	})
	if err == nil || !strings.Contains(err.Error(), "kw0 failed") || !strings.Contains(err.Error(), "kw1 failed") {
		t.Errorf("WaitAll = %v, want both failures", err)
	}
	if err := WaitAll(hosts, func(fleet.Host) error { return nil }); err != nil {
		t.Errorf("WaitAll with every host ready = %v", err)
	}
}

func TestWrongKeys(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("dial tcp 10.0.0.2:22: connection refused"), false},
		{errors.New("ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey]"), true},
		{errors.New("ssh: handshake failed: knownhosts: key mismatch"), true},
	} {
		if got := WrongKeys(c.err); got != c.want {
			t.Errorf("WrongKeys(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
