package phase

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/node"
	"github.com/colonel-byte/cargoship/pkg/retry"
)

// takeOver replaces the stale lock read as holding holder with this run's,
// in one host-side step that first checks it is still that lock and still
// stale (lockTakeoverScript): of two runs that read the same stale lock,
// one takes it and the other finds the first one's live lock. It reports
// whether this run took it. The lock's content reaches the host only as
// its sha256, never as an argument: it may be anything.
func (p *AcquireLock) takeOver(ctx context.Context, h *node.Host, holder string) (bool, error) {
	sum := sha256.Sum256([]byte(holder))
	stale := strconv.Itoa(int(math.Ceil(p.staleAfter().Seconds())))
	out, err := h.Conn.Sudo(ctx, host.Script(lockTakeoverScript, LockPath, p.state.Options.InstanceID, hex.EncodeToString(sum[:]), stale))
	var ee *host.ExitError
	switch {
	case errors.As(err, &ee) && (ee.Code == lockRefused || ee.Code == lockNoFlock):
		return false, retry.Permanent(fmt.Errorf("lock %s: %s", LockPath, ee.Stderr))
	case err != nil:
		return false, err
	}
	switch strings.TrimSpace(out) {
	case "taken":
		return true, nil
	case "changed", "absent":
		return false, nil
	}
	return false, fmt.Errorf("lock %s: the takeover answered %q", LockPath, strings.TrimSpace(out))
}

// takeOverLogged takes over a stale lock of age age and says which run
// won: this one (a warning, as before) or another that took it first.
func (p *AcquireLock) takeOverLogged(ctx context.Context, h *node.Host, holder string, age time.Duration) (bool, error) {
	taken, err := p.takeOver(ctx, h, holder)
	if err != nil {
		return false, err
	}
	log := p.state.Logger()
	if taken {
		log.Warn("taking over a stale lock", "host", h.String(), "holder", holderName(holder), "age", age.Round(time.Second).String())
	} else {
		log.Info("the stale lock changed before this run could take it over", "host", h.String(), "holder", holderName(holder))
	}
	return taken, nil
}
