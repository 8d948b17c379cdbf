package fetch

import (
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// barProgress draws one mpb bar per transfer on a terminal.
type barProgress struct {
	p *mpb.Progress
}

func newBarProgress(w io.Writer) *barProgress {
	// The caller has established w is a terminal; ForceTTY and auto
	// refresh keep mpb drawing even when w wraps the terminal's file.
	return &barProgress{p: mpb.New(mpb.WithOutput(w), mpb.ForceTTY(), mpb.WithAutoRefresh(), mpb.WithWidth(100))}
}

// Start adds a bar; an unknown total (-1) grows as bytes arrive.
func (b *barProgress) Start(name string, total int64) ProgressTask {
	counter := decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")
	if total <= 0 {
		counter = decor.Current(decor.SizeB1024(0), "% .1f")
	}
	bar := b.p.AddBar(max(total, 0),
		mpb.PrependDecorators(
			decor.Name(name, decor.WC{C: decor.DindentRight | decor.DextraSpace}),
			counter,
		),
		mpb.AppendDecorators(
			decor.OnAbort(decor.OnComplete(decor.Percentage(decor.WCSyncSpace), "done"), "failed"),
		),
	)
	return &barTask{bar: bar}
}

// Wait returns once every bar is done and drawn.
func (b *barProgress) Wait() { b.p.Wait() }

type barTask struct {
	bar *mpb.Bar
}

func (t *barTask) Write(p []byte) (int, error) {
	t.bar.IncrBy(len(p))
	return len(p), nil
}

func (t *barTask) SetCurrent(n int64) { t.bar.SetCurrent(n) }

func (t *barTask) Done(err error) {
	if err != nil {
		t.bar.Abort(false)
		return
	}
	t.bar.SetTotal(-1, true)
}
