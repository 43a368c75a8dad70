package clocktest

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// Fake is a Clock that moves only when told to. Timers and tickers fire, in time order,
// while Advance or Set moves the clock past their deadlines; a timer set for a duration of
// zero or less fires at once, as time.Timer's does.
//
// A test that must know a goroutine has started waiting before it advances the clock calls
// BlockUntil, which returns once that many timers and tickers are pending: a signal, not a
// sleep.
type Fake struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	waiters []*fakeWaiter
	seq     uint64 // breaks ties between waiters with the same deadline: first created fires first
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake {
	f := &Fake{now: start}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since returns the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// NewTimer creates a timer that fires when the clock reaches now+d, at once when d <= 0.
func (f *Fake) NewTimer(d time.Duration) clock.Timer {
	w := &fakeWaiter{clock: f, ch: make(chan time.Time, 1)}
	f.schedule(w, d)
	return w
}

// AfterFunc calls fn in its own goroutine when the clock reaches now+d, at once when d <= 0.
func (f *Fake) AfterFunc(d time.Duration, fn func()) clock.Timer {
	w := &fakeWaiter{clock: f, fn: fn}
	f.schedule(w, d)
	return w
}

// NewTicker creates a ticker that fires every d of fake time.
func (f *Fake) NewTicker(d time.Duration) clock.Ticker {
	if d <= 0 {
		panic("clocktest: non-positive interval for NewTicker")
	}
	w := &fakeWaiter{clock: f, ch: make(chan time.Time, 1), period: d}
	f.schedule(w, d)
	return fakeTicker{w}
}

// Advance moves the clock forward by d, firing every timer and tick that falls due on the way.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	target := f.now.Add(d)
	f.mu.Unlock()
	f.Set(target)
}

// Set moves the clock to t (never backwards), firing every timer and tick due by then in order.
func (f *Fake) Set(t time.Time) {
	for {
		f.mu.Lock()
		if len(f.waiters) == 0 || f.waiters[0].deadline.After(t) {
			if t.After(f.now) {
				f.now = t
			}
			f.mu.Unlock()
			return
		}
		w := f.waiters[0]
		f.waiters = f.waiters[1:]
		if w.deadline.After(f.now) {
			f.now = w.deadline
		}
		now := f.now
		if w.period > 0 {
			w.deadline = w.deadline.Add(w.period)
			f.insertLocked(w)
		} else {
			w.pending = false
		}
		f.cond.Broadcast()
		f.mu.Unlock()
		w.fire(now)
	}
}

// Next returns when the earliest timer or tick waiting to fire falls due, and false when
// none waits. Set(next) then fires exactly what falls due at that instant: a timer that
// the code under test sets as it reacts (a retry after a jittered delay) falls due later,
// so it waits for the next step, where an Advance past it would fire it too.
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		return time.Time{}, false
	}
	return f.waiters[0].deadline, true
}

// Pending returns the number of timers and tickers waiting to fire.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n timers and tickers are pending.
func (f *Fake) BlockUntil(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.waiters) < n {
		f.cond.Wait()
	}
}

// BlockUntilContext is BlockUntil bounded by ctx: it returns ctx.Err() if ctx ends first,
// so that a test whose goroutine never starts to wait fails instead of hanging.
func (f *Fake) BlockUntilContext(ctx context.Context, n int) error {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.cond.Broadcast()
	})
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.waiters) < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		f.cond.Wait()
	}
	return nil
}

func (f *Fake) schedule(w *fakeWaiter, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armLocked(w, d)
}

// armLocked sets w to fire at now+d. A timer already due fires at once, as time.Timer's
// does: waiting for the next Advance would leave code that re-arms a timer for a deadline
// the clock has reached (a retry due now) waiting for a step the test may never take.
// A ticker's period is positive, so it always waits.
func (f *Fake) armLocked(w *fakeWaiter, d time.Duration) {
	w.deadline = f.now.Add(d)
	if d <= 0 {
		w.fire(f.now) // never inserted, so not pending
	} else {
		f.insertLocked(w)
	}
	f.cond.Broadcast()
}

func (f *Fake) insertLocked(w *fakeWaiter) {
	f.seq++
	w.seq = f.seq
	w.pending = true
	i := sort.Search(len(f.waiters), func(i int) bool {
		o := f.waiters[i]
		return o.deadline.After(w.deadline) || (o.deadline.Equal(w.deadline) && o.seq > w.seq)
	})
	f.waiters = append(f.waiters, nil)
	copy(f.waiters[i+1:], f.waiters[i:])
	f.waiters[i] = w
}

func (f *Fake) removeLocked(w *fakeWaiter) bool {
	for i, o := range f.waiters {
		if o == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			w.pending = false
			return true
		}
	}
	return false
}

// fakeWaiter is a timer, an AfterFunc or a ticker (period > 0) of a Fake clock.
type fakeWaiter struct {
	clock    *Fake
	ch       chan time.Time
	fn       func()
	period   time.Duration
	deadline time.Time
	seq      uint64
	pending  bool
}

func (w *fakeWaiter) fire(now time.Time) {
	if w.fn != nil {
		go w.fn()
		return
	}
	// Like time.Ticker, drop a tick the receiver has not taken yet rather than block the clock.
	select {
	case w.ch <- now:
	default:
	}
}

func (w *fakeWaiter) C() <-chan time.Time { return w.ch }

func (w *fakeWaiter) Stop() bool {
	w.clock.mu.Lock()
	defer w.clock.mu.Unlock()
	return w.clock.removeLocked(w)
}

func (w *fakeWaiter) Reset(d time.Duration) bool {
	f := w.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	wasPending := f.removeLocked(w)
	if w.period > 0 {
		if d <= 0 {
			panic("clocktest: non-positive interval for Ticker.Reset")
		}
		w.period = d
	}
	f.armLocked(w, d)
	return wasPending
}

// fakeTicker adapts a fakeWaiter to Ticker, whose Stop and Reset return nothing.
type fakeTicker struct{ *fakeWaiter }

func (t fakeTicker) Reset(d time.Duration) { t.fakeWaiter.Reset(d) }
func (t fakeTicker) Stop()                 { t.fakeWaiter.Stop() }
