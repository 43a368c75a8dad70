package carousel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/backoff"
	"github.com/feedkit/feedkit/internal/broadcast"
)

// cycle is one configured cycle and, while it runs, its goroutine. The goroutine is the
// only writer of meta's progress; the scheduler and the operator API read snapshots
// under mu.
type cycle struct {
	cfg     CycleConfig
	sc      *settings // the scheduler's
	log     *slog.Logger
	retries backoff.Policy

	mu       sync.Mutex
	meta     CycleMetadata
	loaded   bool          // meta was restored from the store (or found absent) by the current run
	held     bool          // stopped by the operator: the scheduler's Start leaves it stopped
	gen      Generation    // the activation start last started the goroutine for
	throttle time.Duration // the operator's throttle of a whole-collection cycle; 0 = config
	lim      *rate.Limiter // paces the current iteration
	lastPub  time.Time     // when the last publish began, to re-pace from after a throttle change
	nextPub  time.Time     // lastPub + the throttle then: a run started after a stop waits for it
	runCtx   context.Context
	exiting  bool // the current run's goroutine is on its way out: a start must replace it
	cancel   context.CancelFunc
	done     chan struct{} // closed when the goroutine has exited; nil when never started
	wake     chan struct{} // a throttle change for a goroutine waiting on the old one
	lastSave time.Time
	// sleeping is set while the goroutine waits on a timer of the clock that fires at
	// sleepUntil, for Flush: a cycle asleep until after the clock's time has done what
	// was due.
	sleeping   bool
	sleepUntil time.Time
	flushed    *broadcast.Signal // the scheduler's, told when the cycle falls asleep or exits

	// waitHook, for tests, is told of every wait the goroutine begins, with its deadline.
	waitHook func(id string, until time.Time)
}

func newCycle(cfg CycleConfig, sc *settings, flushed *broadcast.Signal) *cycle {
	return &cycle{
		cfg: cfg, sc: sc, flushed: flushed,
		log:     sc.Logger.With("cycle", cfg.Name),
		retries: backoff.Policy{Initial: sc.RetryInitial, Max: sc.RetryMax, Jitter: 0.5},
		meta:    CycleMetadata{CycleID: cfg.Name, Config: cfg, States: []State{Stopped}},
		wake:    make(chan struct{}, 1),
	}
}

// snapshot returns a copy of the cycle's metadata.
func (c *cycle) snapshot() CycleMetadata {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta.clone()
}

// running reports whether the goroutine is running.
func (c *cycle) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runningLocked()
}

func (c *cycle) runningLocked() bool {
	if c.done == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// restore loads the cycle's saved metadata, at every start: the progress in memory may
// be behind the store's, which another instance may have moved on while this one was
// passive. Progress saved under a config that selects other items, or with a negative
// count, is dropped, and the cycle starts from the beginning, as it does when the store
// has none. Counts that contradict each other are bounded until begin counts the
// iteration again (place): completed within total, errors within completed.
func (c *cycle) restore(ctx context.Context) error {
	m, ok, err := c.sc.Store.Load(ctx, c.cfg.Name)
	if err != nil {
		return fmt.Errorf("carousel: cycle %s: loading metadata: %w", c.cfg.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = true
	fresh := CycleMetadata{CycleID: c.cfg.Name, Config: c.cfg, States: c.meta.States}
	switch {
	case !ok:
		c.meta = fresh
	case !c.cfg.compatible(m.Config) || m.Completed < 0 || m.Iteration < 0 || m.Total < 0 || m.Errors < 0:
		c.log.Info("saved metadata does not fit the cycle's config; starting from the beginning",
			"saved", m.Config, "config", c.cfg)
		c.meta = fresh
	default:
		m.CycleID, m.Config = c.cfg.Name, c.cfg
		m.States = c.meta.States // the states of now, not of when it was saved
		m.CurrentItem = ""
		if m.InProgress {
			// An iteration that completed more items than its total had at least as many;
			// begin counts them again, and Completed stays the number of items to skip.
			m.Total = max(m.Total, m.Completed)
		} else {
			m.Completed = min(m.Completed, m.Total) // the next iteration starts at 0 anyway
		}
		m.Errors = min(m.Errors, m.Completed)
		c.meta = m
		c.log.Info("metadata restored", "iteration", m.Iteration, "completed", m.Completed, "total", m.Total)
	}
	return nil
}

// claim saves the restored progress at once under the activation's generation, so that
// from now on the store refuses the saves of every earlier activation: an instance that
// lost the active role and has not noticed yet cannot overwrite this one's progress. It
// returns only ErrFenced, when a later activation has claimed the cycle already; a store
// that fails is logged and claimed again at the first checkpoint (save clears lastSave).
func (c *cycle) claim(ctx context.Context, gen Generation) error {
	ctx, cancel := context.WithTimeout(ctx, c.sc.PublishTimeout)
	defer cancel()
	if err := c.save(ctx, gen); errors.Is(err, ErrFenced) {
		return err
	}
	return nil
}

// start starts the goroutine for the activation gen unless it runs for gen and stays
// running. A goroutine that was stopped, or is stopping by itself, but has not finished
// yet (its last save may take a while) is replaced: the new one begins when the old one
// has finished, so that a Start after a Shutdown that timed out, or a resume of a cycle
// that just stopped, is not lost. So is one that runs for another activation: it stops,
// saving under its own generation, and the new one restores the progress from the store.
func (c *cycle) start(gen Generation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runningLocked() && !c.exiting && c.runCtx.Err() == nil {
		if c.gen == gen {
			return
		}
		c.cancel()
	}
	prev := c.done
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.runCtx, c.cancel, c.done, c.exiting, c.gen = ctx, cancel, done, false, gen
	c.setStateLocked(Starting)
	go func() {
		if prev != nil {
			<-prev
		}
		c.run(ctx, done, gen)
	}()
}

// stop stops the goroutine and saves the metadata. It returns when the goroutine is gone
// or ctx ends, whichever is first.
func (c *cycle) stop(ctx context.Context) error {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if done == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("carousel: cycle %s: stopping: %w", c.cfg.Name, ctx.Err())
	}
	return nil
}

// run is the cycle's goroutine for the activation gen: it restores the progress from the
// store, claims it for gen, and runs iterations one after the other until ctx ends, the
// source fails under StopWhenUnhealthy, or the store refuses a save because a later
// activation saved (ErrFenced).
func (c *cycle) run(ctx context.Context, done chan struct{}, gen Generation) {
	defer c.flushed.Notify() // after done is closed: the cycle waits for nothing any more
	defer close(done)
	fenced := false
	defer func() {
		c.mu.Lock()
		if c.done == done { // not replaced by a newer run already
			c.exiting = true
			c.setStateLocked(Stopped)
		}
		c.mu.Unlock()
		if fenced {
			return // the store would refuse the save too
		}
		// The run's ctx is over; the save still gets its time.
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.sc.PublishTimeout)
		defer cancel()
		_ = c.save(saveCtx, gen) // logged
	}()
	c.mu.Lock()
	c.loaded = false // until this run has restored, there is nothing of its own to save
	c.mu.Unlock()
	// Loaded here rather than by the scheduler, so that a store that fails for a moment
	// makes the cycle unhealthy and retried, not silently left stopped.
	err := c.retry(ctx, OpLoad, func() error { return c.restore(ctx) })
	if err == nil {
		err = c.claim(ctx, gen)
	}
	for err == nil && ctx.Err() == nil {
		err = c.iterate(ctx, gen)
	}
	switch {
	case errors.Is(err, ErrFenced):
		// Another instance is active: this one stops the cycle, without holding it, so
		// that its next activation starts it again.
		fenced = true
		c.mu.Lock()
		c.meta.LastError = err.Error()
		c.touchLocked()
		c.mu.Unlock()
		c.log.Warn("a later activation saved the cycle's progress: stopping it here", "generation", gen, "err", err)
	case err != nil && !errors.Is(err, context.Canceled):
		// Stopped by an unhealthy source: it stays stopped, through the scheduler's
		// Start too, until an operator resumes it.
		c.mu.Lock()
		c.held = true
		c.mu.Unlock()
		c.log.Error("cycle stopped", "err", err)
	}
}

// iterate runs one iteration, or the rest of one that was interrupted, and then waits
// until the next may begin. Its saves are of the activation gen.
func (c *cycle) iterate(ctx context.Context, gen Generation) error {
	q, err := c.begin(ctx)
	if err != nil {
		return err
	}
	published := 0
	c.mu.Lock()
	after := c.meta.Last
	pageSize := c.sc.PageSize
	c.mu.Unlock()
	for {
		var page []Item
		err := c.retry(ctx, OpList, func() (err error) {
			page, err = c.sc.source.List(ctx, q, after, pageSize)
			return err
		})
		if err != nil {
			return err
		}
		for _, it := range page {
			if err := c.pace(ctx); err != nil {
				return err
			}
			if err := c.publish(ctx, it, gen); err != nil {
				return err
			}
			published++
			after = it
		}
		if len(page) < pageSize {
			break
		}
	}
	if err := c.end(ctx, gen); err != nil {
		return err
	}
	if published == 0 {
		return c.coolDown(ctx)
	}
	// The last item gets its full throttle too: the next iteration's first publish, or a
	// later item of a whole collection, keeps the interval.
	return c.pace(ctx)
}

// begin starts the next iteration, counting its items and choosing its throttle, or picks
// up the iteration a restart or a stop interrupted. It returns the iteration's query.
func (c *cycle) begin(ctx context.Context) (Query, error) {
	now := c.sc.Clock.Now()
	c.mu.Lock()
	if c.meta.Has(CoolDown) {
		c.setStateLocked(Running) // counting the next window, which may need retries
	}
	m := c.meta
	resume := m.Iteration > 0 && m.InProgress
	q := Query{Collection: c.cfg.Collection}
	if resume {
		q.Start, q.End = m.WindowStart, m.WindowEnd
	} else if c.cfg.Type.Windowed() {
		q.Start, q.End = nextWindow(c.cfg, now, m.WindowEnd)
	}
	c.mu.Unlock()

	var total int
	var at position
	if err := c.retry(ctx, OpCount, func() (err error) {
		if total, err = c.sc.source.Count(ctx, q); err != nil || !resume {
			return err
		}
		at, err = c.place(ctx, q, m)
		return err
	}); err != nil {
		return Query{}, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if !resume {
		c.meta.Iteration++
		c.meta.Completed, c.meta.Errors, c.meta.Last, c.meta.CurrentItem = 0, 0, Item{}, ""
		c.meta.IterationStart = c.sc.Clock.Now()
		c.meta.InProgress = true
		c.meta.WindowStart, c.meta.WindowEnd = q.Start, q.End
	} else {
		// The items the iteration has now, less those still to come: within the total
		// however the collection changed and whatever the metadata claimed. Should the
		// listing have found more than Count did (items added in between), they count.
		total = max(total, at.rest)
		c.meta.Last = at.after
		c.meta.Completed = total - at.rest
		c.meta.Errors = min(c.meta.Errors, c.meta.Completed)
	}
	c.meta.Total = total
	span := c.cfg.TimeWindow
	if resume {
		// The items still to come, over what is left of the iteration's period.
		total = max(total-c.meta.Completed, 0)
		span = c.meta.IterationStart.Add(c.cfg.TimeWindow).Sub(now)
	}
	c.meta.Throttle = c.throttleLocked(span, total)
	c.lim = rate.NewLimiter(rate.Every(c.meta.Throttle), 1)
	if now.Before(c.nextPub) {
		// Started again soon after a stop: the last publish's throttle still holds.
		c.lim.ReserveN(c.nextPub.Add(-c.meta.Throttle), 1)
	}
	c.setStateLocked(Running)
	c.touchLocked()
	return q, nil
}

// position is where a resumed iteration stands in its query's order: the item it goes
// on after, and how many items come after that one.
type position struct {
	after Item
	rest  int
}

// place finds where the resumed iteration of m stands in q's order, in the collection as
// it is now. Progress saved with a last item (a keyset position) goes on after it, so that
// items added or removed meanwhile shift nothing. Progress saved as a count only, the
// as the Financial Times' publish-carousel saves it, goes on after that many items, as
// publish-carousel skips them in its cursor: in a collection that has fewer, after its last. Either way the items after
// the position are listed once and counted, which is what makes the completed count
// exact: a resume lists, in pages, the ids from its position to the end (and, resuming by
// count, those it skips) once before it publishes.
func (c *cycle) place(ctx context.Context, q Query, m CycleMetadata) (position, error) {
	at := position{after: m.Last}
	if at.after == (Item{}) && m.Completed > 0 {
		for skipped := 0; skipped < m.Completed; {
			limit := min(c.sc.PageSize, m.Completed-skipped)
			page, err := c.sc.source.List(ctx, q, at.after, limit)
			if err != nil {
				return position{}, err
			}
			if len(page) > 0 {
				at.after = page[len(page)-1]
			}
			skipped += len(page)
			if len(page) < limit {
				break // the collection holds fewer items than the count claims
			}
		}
	}
	for cursor := at.after; ; {
		page, err := c.sc.source.List(ctx, q, cursor, c.sc.PageSize)
		if err != nil {
			return position{}, err
		}
		at.rest += len(page)
		if len(page) < c.sc.PageSize {
			return at, nil
		}
		cursor = page[len(page)-1]
	}
}

// throttleLocked returns the interval for n items over span.
func (c *cycle) throttleLocked(span time.Duration, n int) time.Duration {
	if c.cfg.Type == ThrottledWholeCollection && c.throttle > 0 {
		return c.throttle
	}
	return throttleFor(c.cfg, span, n)
}

// end records the end of the iteration and saves it. The save is bounded, and outlives
// a stop that comes meanwhile: the iteration did end. It returns ErrFenced when the store
// refused the save, and nil when it failed otherwise (logged).
func (c *cycle) end(ctx context.Context, gen Generation) error {
	c.mu.Lock()
	c.meta.IterationEnd = c.sc.Clock.Now()
	c.meta.InProgress = false
	var took time.Duration
	if start := c.meta.IterationStart; !start.IsZero() && start.Before(c.meta.IterationEnd) {
		took = c.meta.IterationEnd.Sub(start)
	}
	c.touchLocked()
	c.mu.Unlock()
	if o := c.sc.Observer; o != nil {
		o.CarouselIterationCompleted(c.cfg.Name, took)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.sc.PublishTimeout)
	defer cancel()
	if err := c.save(ctx, gen); errors.Is(err, ErrFenced) {
		return err
	}
	return nil
}

// pace waits for the limiter to allow one more publish. A throttle changed meanwhile
// takes effect at once. The limiter is a token bucket of one: publishes keep to their
// schedule, and after one that came late (a slow publish, a busy machine) the next may
// follow at once, but never two.
func (c *cycle) pace(ctx context.Context) error {
	for {
		c.mu.Lock()
		lim := c.lim
		c.mu.Unlock()
		now := c.sc.Clock.Now()
		r := lim.ReserveN(now, 1)
		d := r.DelayFrom(now)
		if d <= 0 {
			return nil
		}
		// rate.Limiter computes in float seconds: 5m can come out 1ns short. Rounding up
		// to the microsecond never publishes early and keeps whole-second schedules
		// whole.
		d = (d + time.Microsecond - 1).Truncate(time.Microsecond)
		switch err := c.sleep(ctx, d); {
		case err == nil:
			return nil
		case errors.Is(err, errWoken):
			r.CancelAt(c.sc.Clock.Now())
		default:
			return err
		}
	}
}

var errWoken = errors.New("woken")

// sleep waits d on the clock; it ends early with errWoken on a throttle change, or with
// ctx's error.
func (c *cycle) sleep(ctx context.Context, d time.Duration) error {
	t, until, err := c.arm(d)
	if err != nil || t == nil {
		return err // woken, or the time passed already
	}
	defer t.Stop()
	if c.waitHook != nil {
		c.waitHook(c.cfg.Name, until)
	}
	defer func() {
		c.mu.Lock()
		c.sleeping = false
		c.mu.Unlock()
	}()
	select {
	case <-t.C():
		return nil
	case <-c.wake:
		return errWoken
	case <-ctx.Done():
		return ctx.Err()
	}
}

// arm sets a timer for d and records, for Flush, that the cycle sleeps until it fires. It
// returns errWoken instead when a throttle change is pending, and no timer when the clock
// moved past the deadline while the timer was being set: the wait is over.
//
// The deadline Flush compares with the clock's time must be the timer's own: one taken
// earlier would make Flush wait for a timer that has not fired, one taken later would let
// it return before the cycle wakes. So when a clock other than the wall clock moved while
// the timer was set (a fake advanced by another goroutine), the timer is set again for
// what is left until the same deadline, until the clock stood still around it. The wall
// clock never stands still, and needs no such care: Flush is for fake clocks.
func (c *cycle) arm(d time.Duration) (clock.Timer, time.Time, error) {
	clk := c.sc.Clock
	before := clk.Now()
	until := before.Add(d)
	t := clk.NewTimer(d)
	for range 8 { // a clock that never stands still gets the last timer
		after := clk.Now()
		if after.Equal(before) || clk == clock.Real() {
			break
		}
		t.Stop() // a timer that fired meanwhile holds a stale tick: a new one instead
		if !until.After(after) {
			return nil, until, nil
		}
		before = after
		t = clk.NewTimer(until.Sub(before))
	}
	c.mu.Lock()
	select {
	case <-c.wake:
		c.mu.Unlock()
		t.Stop()
		return nil, time.Time{}, errWoken
	default:
	}
	c.sleeping, c.sleepUntil = true, until
	c.mu.Unlock()
	c.flushed.Notify()
	return t, until, nil
}

// idle reports whether the cycle has done what is due by now: it is not running, or it
// sleeps on a timer that fires after now.
func (c *cycle) idle(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.runningLocked() || (c.sleeping && c.sleepUntil.After(now))
}

// coolDown waits CoolDown, in the CoolDown state.
func (c *cycle) coolDown(ctx context.Context) error {
	c.mu.Lock()
	c.setStateLocked(CoolDown)
	c.mu.Unlock()
	return c.sleepFor(ctx, c.cfg.CoolDown)
}

// sleepFor waits d on the clock; a throttle change neither shortens nor lengthens it.
func (c *cycle) sleepFor(ctx context.Context, d time.Duration) error {
	deadline := c.sc.Clock.Now().Add(d)
	for {
		err := c.sleep(ctx, d)
		if !errors.Is(err, errWoken) {
			return err
		}
		if d = deadline.Sub(c.sc.Clock.Now()); d <= 0 {
			return nil
		}
	}
}

// publish republishes one item and records it as completed, failed or not. It returns
// ErrFenced when its checkpoint was refused: another instance is active.
func (c *cycle) publish(ctx context.Context, it Item, gen Generation) error {
	c.mu.Lock()
	c.meta.CurrentItem = it.ID
	began := c.sc.Clock.Now()
	c.lastPub = began
	c.nextPub = c.lastPub.Add(c.meta.Throttle)
	p := Publication{Cycle: c.cfg.Name, Origin: c.cfg.Origin, Collection: c.cfg.Collection, Item: it,
		Iteration: c.meta.Iteration, Position: c.meta.Completed + 1}
	c.mu.Unlock()

	pctx, cancel := context.WithTimeout(ctx, c.sc.PublishTimeout)
	err := c.sc.publisher.Publish(pctx, p)
	cancel()
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // stopped mid-publish: the item is not done, a resume publishes it again
	}

	c.mu.Lock()
	c.meta.Completed++
	// An item added after the iteration counted its items, past the point it has reached,
	// is published by it, and so counts in its total.
	c.meta.Total = max(c.meta.Total, c.meta.Completed)
	c.meta.Last = it
	if err != nil {
		c.meta.Errors++
		c.meta.LastError = err.Error()
	}
	c.touchLocked()
	due := c.sc.Clock.Since(c.lastSave) >= c.sc.CheckpointInterval
	c.mu.Unlock()
	if err != nil {
		c.log.Warn("publish failed", "item", it.ID, "err", err)
	}
	if o := c.sc.Observer; o != nil {
		// The clock is read again only for an observer.
		if took := c.sc.Clock.Since(began); err != nil {
			o.CarouselPublishFailed(c.cfg.Name, took)
		} else {
			o.CarouselPublished(c.cfg.Name, took)
		}
	}
	if due {
		if err := c.save(ctx, gen); errors.Is(err, ErrFenced) {
			return err
		}
	}
	return nil
}

// retry calls f, the operation op, until it succeeds, marking the cycle unhealthy while it
// fails and waiting a capped exponential backoff between calls; under StopWhenUnhealthy
// the first failure stops the cycle instead. It returns ctx's error, or the failure that
// stopped the cycle.
func (c *cycle) retry(ctx context.Context, op Op, f func() error) error {
	what := op.doing()
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil {
			c.mu.Lock()
			if c.meta.Has(Unhealthy) {
				c.setUnhealthyLocked(false)
				c.log.Info("source reachable again", "after", attempt)
			}
			c.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.mu.Lock()
		c.setUnhealthyLocked(true)
		c.meta.LastError = fmt.Sprintf("%s: %v", what, err)
		c.touchLocked()
		c.mu.Unlock()
		if o := c.sc.Observer; o != nil {
			o.CarouselFailed(c.cfg.Name, op)
		}
		if c.sc.StopWhenUnhealthy {
			return fmt.Errorf("carousel: cycle %s: %s: %w", c.cfg.Name, what, err)
		}
		d := c.retries.Delay(attempt)
		c.log.Warn("source failed; retrying", "op", what, "attempt", attempt+1, "in", d, "err", err)
		if err := c.sleepFor(ctx, d); err != nil {
			return err
		}
	}
}

// setThrottle changes the throttle of a whole-collection cycle. The next publish comes
// one new throttle after the last one began (at once, if that is past).
func (c *cycle) setThrottle(d time.Duration) error {
	if c.cfg.Type != ThrottledWholeCollection {
		return ErrNotAdjustable
	}
	c.mu.Lock()
	c.throttle = d
	c.meta.Throttle = d
	lim := rate.NewLimiter(rate.Every(d), 1)
	if !c.lastPub.IsZero() {
		lim.ReserveN(c.lastPub, 1) // the token the last publish took
	}
	c.lim = lim
	c.touchLocked()
	// Under mu, with sleeping cleared, so that Flush never takes a goroutine about to wake
	// for an asleep one (arm checks for a pending wake under mu too).
	c.sleeping = false
	select {
	case c.wake <- struct{}{}:
	default:
	}
	c.mu.Unlock()
	return nil
}

// currentThrottle returns the interval the cycle publishes at now.
func (c *cycle) currentThrottle() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.meta.Throttle > 0 {
		return c.meta.Throttle
	}
	return c.throttleLocked(c.cfg.TimeWindow, c.meta.Total)
}

// reset forgets the cycle's progress: its next iteration is a first one.
func (c *cycle) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	states := c.meta.States
	c.meta = CycleMetadata{CycleID: c.cfg.Name, Config: c.cfg, States: states}
	c.touchLocked()
}

// save writes the metadata to the store under the activation gen; a failure is logged,
// returned, and retried at the next checkpoint. Until the run has loaded the saved
// metadata there is nothing to save: writing the progress of a cycle that never got to
// load (blank, or an earlier activation's) would erase the saved one.
func (c *cycle) save(ctx context.Context, gen Generation) error {
	c.mu.Lock()
	if !c.loaded {
		c.mu.Unlock()
		return nil
	}
	m := c.meta.clone()
	c.lastSave = c.sc.Clock.Now()
	c.mu.Unlock()
	err := c.sc.Store.Save(ctx, m, gen)
	if err != nil {
		fenced := errors.Is(err, ErrFenced)
		if !fenced {
			c.log.Error("saving metadata failed", "err", err)
		}
		if o := c.sc.Observer; o != nil {
			switch {
			case fenced:
				o.CarouselFenced(c.cfg.Name)
			case ctx.Err() == nil: // not cut short by a stop
				o.CarouselFailed(c.cfg.Name, OpSave)
			}
		}
		c.mu.Lock()
		c.lastSave = time.Time{}
		c.mu.Unlock()
	}
	return err
}

// setStateLocked sets the main state, keeping Unhealthy.
func (c *cycle) setStateLocked(s State) {
	states := []State{s}
	if c.meta.Has(Unhealthy) {
		states = append(states, Unhealthy)
	}
	c.meta.States = states
	c.touchLocked()
}

func (c *cycle) setUnhealthyLocked(on bool) {
	main := c.meta.States[0]
	c.meta.States = []State{main}
	if on {
		c.meta.States = append(c.meta.States, Unhealthy)
	}
}

func (c *cycle) touchLocked() { c.meta.UpdatedAt = c.sc.Clock.Now() }
