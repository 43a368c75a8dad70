// Package ingestbench holds what the ingest benchmarks of feed and group share: a
// window that times a consumer's run and the process's CPU time meanwhile, the global
// listener that says when a session is up, and a listener that counts what it is given
// and holds its first call until the clock starts.
package ingestbench

import (
	"context"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Rate is what one consumer achieved: messages per second, and the CPU time this
// process spent per message meanwhile (user and system, every goroutine).
type Rate struct {
	MsgsPerSec float64
	CPUPerMsg  time.Duration
}

// Window times one consumer's run.
type Window struct {
	start time.Time
	cpu   time.Duration
}

// Start opens a window now.
func Start() Window { return Window{start: time.Now(), cpu: processCPU()} }

// Began is when the window opened.
func (w Window) Began() time.Time { return w.start }

// End returns the rate of the n messages taken in the window.
func (w Window) End(n int) Rate {
	elapsed, cpu := time.Since(w.start), processCPU()-w.cpu
	return Rate{MsgsPerSec: float64(n) / elapsed.Seconds(), CPUPerMsg: cpu / time.Duration(max(n, 1))}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// UpSignal is a global listener that signals a session's first ConnectionUp.
type UpSignal struct {
	feed.BaseGlobalEventsListener
	C chan struct{}
}

// NewUpSignal returns an UpSignal whose C receives the first ConnectionUp.
func NewUpSignal() *UpSignal { return &UpSignal{C: make(chan struct{}, 1)} }

// OnConnectionUp signals C, once.
func (u *UpSignal) OnConnectionUp(context.Context, feed.SessionRef) {
	select {
	case u.C <- struct{}{}:
	default:
	}
}

// CountingListener counts decoded odds changes: its first call waits until Gate is
// closed, and Done is closed at the want-th.
type CountingListener struct {
	feed.BaseOddsFeedListener
	n    atomic.Int64
	want int64
	Gate chan struct{}
	Done chan struct{}
}

// NewCountingListener returns a CountingListener done at want calls.
func NewCountingListener(want int) *CountingListener {
	return &CountingListener{want: int64(want), Gate: make(chan struct{}), Done: make(chan struct{})}
}

// OnOddsChange counts m.
func (c *CountingListener) OnOddsChange(context.Context, *feed.OddsChange) error {
	<-c.Gate
	if c.n.Add(1) == c.want {
		close(c.Done)
	}
	return nil
}
