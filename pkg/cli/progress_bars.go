package cli

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/colonel-byte/cargoship/pkg/node"
)

// barTick is how often the bars take the counted bytes: a transfer only
// adds to an atomic counter per read, so a fast link is not slowed by
// the display.
const barTick = 100 * time.Millisecond

// barProgress draws one mpb bar per host on a terminal: the bytes its
// uploads sent of those they will send, the file being sent and the speed.
//
// The bars live only while uploads run. A host's batch (node's Begin: one
// phase's files for the host) keeps its bar; when it ends the bar is
// finished and pops above the running ones, drawn no more, so a large
// fleet redraws only the hosts still sending. When the last open batch
// ends, the bars are drawn to the end before that batch's caller goes on,
// so the phase's next log line is printed below them, not into a redraw.
type barProgress struct {
	w    io.Writer
	tick time.Duration

	mu       sync.Mutex     // guards the fields below but bars
	p        *mpb.Progress  // nil until bytes are sent, and between batches
	open     int            // batches open across hosts
	hostOpen map[string]int // batches open per host
	stop     chan struct{}
	// ticks is the ticker's goroutine, which end waits for holding mu:
	// the ticker takes only barsMu
	ticks  sync.WaitGroup
	barsMu sync.Mutex
	bars   map[string]*hostBar
}

func newBarProgress(w io.Writer) *barProgress {
	return &barProgress{w: w, tick: barTick}
}

// hostBar is one host's bar. The counters are written by the transfers
// and read by the ticker.
type hostBar struct {
	bar    *mpb.Bar
	total  atomic.Int64
	sent   atomic.Int64
	file   atomic.Value // string: the file being sent
	failed atomic.Bool
	start  atomic.Int64 // unix nanoseconds of the first Start: the average's
	// average is the speed over the batch, set when it ends
	average atomic.Value
}

// Begin opens a batch of host's uploads. Nothing is drawn until bytes
// are sent: a converged fleet, whose files are all in place, shows no bar.
func (b *barProgress) Begin(host string) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.begin(host)
	var once sync.Once
	return func() { once.Do(func() { b.end(host) }) }
}

// begin counts a batch in; b.mu is held.
func (b *barProgress) begin(host string) {
	if b.hostOpen == nil {
		b.hostOpen = map[string]int{}
	}
	b.open++
	b.hostOpen[host]++
}

// end closes one of host's batches. The host's last finishes its bar,
// and the last of all draws the bars to the end and lets them go.
func (b *barProgress) end(host string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open--
	if b.hostOpen[host]--; b.hostOpen[host] == 0 {
		delete(b.hostOpen, host)
		b.barsMu.Lock()
		if hb := b.bars[host]; hb != nil {
			finish(hb)
			delete(b.bars, host)
		}
		b.barsMu.Unlock()
	}
	if b.open > 0 || b.p == nil {
		return
	}
	close(b.stop)
	b.ticks.Wait()
	b.p.Wait()
	b.p, b.bars = nil, nil
}

// finish draws hb's last counts and completes its bar, or marks it
// failed.
func finish(hb *hostBar) {
	hb.average.Store(speed(hb.sent.Load(), time.Since(time.Unix(0, hb.start.Load()))))
	show(hb, 0)
	if hb.failed.Load() {
		hb.bar.Abort(false)
		return
	}
	hb.bar.SetTotal(-1, true)
}

// Start counts one transfer into its host's bar.
func (b *barProgress) Start(host, name string, size int64) node.Tracker {
	b.mu.Lock()
	hb := b.barOf(host)
	t := &barTracker{hb: hb}
	if b.hostOpen[host] == 0 {
		// node begins a batch before it sends; without one the bar
		// would never be finished, so this transfer is its own batch
		b.begin(host)
		t.end = func() { b.end(host) }
	}
	b.mu.Unlock()
	hb.start.CompareAndSwap(0, time.Now().UnixNano())
	hb.total.Add(size)
	hb.file.Store(name)
	return t
}

// barOf is host's bar, made (and the bars drawn) when it has none. b.mu
// is held.
func (b *barProgress) barOf(host string) *hostBar {
	if b.p == nil {
		// ForceTTY: the caller has established w is a terminal, also
		// when w wraps the terminal's file.
		b.p = mpb.New(mpb.WithOutput(b.w), mpb.ForceTTY(), mpb.WithAutoRefresh(), mpb.WithWidth(100), mpb.PopCompletedMode())
		b.barsMu.Lock()
		b.bars = map[string]*hostBar{}
		b.barsMu.Unlock()
		b.stop = make(chan struct{})
		b.ticks.Add(1)
		go b.ticker(b.stop)
	}
	b.barsMu.Lock()
	defer b.barsMu.Unlock()
	if hb, ok := b.bars[host]; ok {
		return hb
	}
	hb := &hostBar{}
	hb.file.Store("")
	hb.bar = b.p.AddBar(0, // no total: the bar completes when the batches end, not between files
		mpb.PrependDecorators(
			decor.Name("["+host+"]", decor.WC{C: decor.DindentRight | decor.DextraSpace | decor.DSyncWidth}),
			decor.Any(func(decor.Statistics) string { return hb.file.Load().(string) }, decor.WC{C: decor.DindentRight | decor.DextraSpace | decor.DSyncWidth}),
			decor.Counters(decor.SizeB1024(0), "% .1f / % .1f", decor.WC{C: decor.DSyncWidth}),
		),
		mpb.AppendDecorators(
			// the recent speed while sending, the average once done (a
			// short batch would end before a recent speed was measured)
			decor.OnAbort(decor.OnCompleteMeta(decor.EwmaSpeed(decor.SizeB1024(0), "% .1f", 30), func(string) string {
				v, _ := hb.average.Load().(string)
				return v
			}), "failed"),
		),
	)
	b.bars[host] = hb
	return hb
}

// ticker hands the counted bytes to the bars every tick.
func (b *barProgress) ticker(stop <-chan struct{}) {
	defer b.ticks.Done()
	t := time.NewTicker(b.tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			b.barsMu.Lock()
			for _, hb := range b.bars {
				show(hb, now.Sub(last))
			}
			b.barsMu.Unlock()
			last = now
		}
	}
}

// show gives hb's bar its counters; took is the time since the last
// show, for the speed.
func show(hb *hostBar, took time.Duration) {
	hb.bar.SetTotal(hb.total.Load(), false)
	if took > 0 {
		hb.bar.EwmaSetCurrent(hb.sent.Load(), took)
	} else {
		hb.bar.SetCurrent(hb.sent.Load())
	}
}

type barTracker struct {
	hb  *hostBar
	end func() // set when the transfer is its own batch
}

func (t *barTracker) Add(n int64) { t.hb.sent.Add(n) }

func (t *barTracker) Done(err error) {
	if err != nil {
		t.hb.failed.Store(true)
	}
	if t.end != nil {
		t.end()
	}
}
