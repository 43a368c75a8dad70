package carousel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/internal/broadcast"
)

// Scheduler runs cycles, each on its own goroutine: a cycle's failure never stops
// another. It adds, deletes, stops, resumes and resets them, and starts and shuts them
// all down, by hand or as its Toggle says. All its methods are safe for concurrent use.
type Scheduler struct {
	cfg settings

	// life serializes what starts and stops cycles, so that a Shutdown never races a
	// Start or a resume into leaving a cycle running. It is taken before mu.
	life sync.Mutex

	mu      sync.Mutex
	cycles  map[string]*cycle
	started bool       // the cycles are meant to run: Start was called, and no Shutdown since
	active  bool       // the toggle's last answer, as Run saw it
	gen     Generation // the generation of the toggle's last active answer, or of Promote

	flushed broadcast.Signal // told when a cycle falls asleep or exits, or Run has asked the toggle
	run     runTicks         // the ticks of the Run going, for Flush; zero when none is
	asking  int              // Run is asking the toggle and acting on its answer
	asked   time.Time        // when Run last began to ask, of the asks it has finished

	waitHook func(id string, until time.Time) // for tests: see cycle.waitHook
}

// CycleStatus is a cycle as the operator sees it.
type CycleStatus struct {
	// ID is the cycle's id, its name.
	ID string `json:"id"`
	// Config is the cycle's configuration.
	Config CycleConfig `json:"config"`
	// Metadata is the cycle's progress and states.
	Metadata CycleMetadata `json:"metadata"`
}

// Status is the scheduler as the operator sees it.
type Status struct {
	// Started reports whether the cycles are meant to run (Start was called, and no
	// Shutdown since); a cycle stopped by hand stays stopped.
	Started bool `json:"started"`
	// Active is the toggle's last answer, as Run saw it.
	Active bool `json:"active"`
	// Generation is the generation of the toggle's last active answer (or of the
	// promotion by Start): the activation the cycles run for, and save their progress
	// under. 0 before the first, and for a toggle that does not number its activations.
	Generation Generation `json:"generation"`
	// Cycles are the cycles, by id.
	Cycles []CycleStatus `json:"cycles"`
}

// NewScheduler returns a scheduler with no cycles, whose cycles list their items from src
// and republish each through pub. It refuses a nil src or pub, and a Config it cannot use
// with the field named (ErrInvalidConfig). Nothing runs until Start or Run.
func NewScheduler(src Source, pub Publisher, cfg Config) (*Scheduler, error) {
	switch {
	case src == nil:
		return nil, fmt.Errorf("carousel: NewScheduler: the Source is nil: %w", ErrInvalidConfig)
	case pub == nil:
		return nil, fmt.Errorf("carousel: NewScheduler: the Publisher is nil: %w", ErrInvalidConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Scheduler{cfg: settings{Config: cfg, source: src, publisher: pub}, cycles: make(map[string]*cycle)}, nil
}

// settings is what the scheduler and its cycles run with: the Config, defaults filled
// in, and the collaborators given to NewScheduler.
type settings struct {
	Config
	source    Source
	publisher Publisher
}

// Add adds a cycle, refusing an invalid config (ErrInvalidConfig, every bad field named)
// or a taken name (ErrExists). When the scheduler is started, the cycle's saved metadata
// is restored and it starts at once.
func (s *Scheduler) Add(ctx context.Context, cfg CycleConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	if _, ok := s.cycles[cfg.Name]; ok {
		s.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrExists, cfg.Name)
	}
	c := newCycle(cfg, &s.cfg, &s.flushed)
	c.waitHook = s.waitHook
	s.cycles[cfg.Name] = c
	started, gen := s.started, s.gen
	s.mu.Unlock()
	if started {
		c.start(gen)
	}
	return nil
}

// Delete stops the cycle id, forgets it, and deletes its saved metadata.
func (s *Scheduler) Delete(ctx context.Context, id string) error {
	return s.withCycle(id, func(c *cycle) error {
		c.mu.Lock()
		c.held = true // stopped for good, even if the delete below fails
		c.mu.Unlock()
		if err := c.stop(ctx); err != nil {
			return err
		}
		// The goroutine saved on its way out; the delete comes after. The cycle is forgotten
		// only once its metadata is: a cycle re-added under the name must not resume it.
		if err := s.cfg.Store.Delete(ctx, id); err != nil {
			return fmt.Errorf("carousel: deleting metadata of cycle %s (it is stopped; delete it again): %w", id, err)
		}
		s.mu.Lock()
		if s.cycles[id] == c {
			delete(s.cycles, id)
		}
		s.mu.Unlock()
		return nil
	})
}

// Cycles returns every cycle's status, by id.
func (s *Scheduler) Cycles() []CycleStatus {
	s.mu.Lock()
	cs := slices.SortedFunc(maps.Values(s.cycles), func(a, b *cycle) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) })
	s.mu.Unlock()
	out := make([]CycleStatus, len(cs))
	for i, c := range cs {
		out[i] = c.status()
	}
	return out
}

// Cycle returns the status of the cycle id, or ErrNotFound.
func (s *Scheduler) Cycle(id string) (CycleStatus, error) {
	c, err := s.cycle(id)
	if err != nil {
		return CycleStatus{}, err
	}
	return c.status(), nil
}

// Status returns the scheduler's state and every cycle's.
func (s *Scheduler) Status() Status {
	s.mu.Lock()
	st := Status{Started: s.started, Active: s.active, Generation: s.gen}
	s.mu.Unlock()
	st.Cycles = s.Cycles()
	return st
}

// StopCycle stops the cycle id and saves its metadata; it stays stopped, through the
// scheduler's Start and the toggle's changes too, until ResumeCycle. The hold lasts as
// long as the process: a restarted process starts every cycle (remove a cycle from the
// config file to keep it stopped).
func (s *Scheduler) StopCycle(ctx context.Context, id string) error {
	return s.withCycle(id, func(c *cycle) error {
		c.mu.Lock()
		c.held = true
		c.mu.Unlock()
		return c.stop(ctx)
	})
}

// ResumeCycle starts the cycle id again where its saved progress says it stopped. It
// returns ErrPassive when the scheduler is not started (its cycles are not meant to run
// here).
func (s *Scheduler) ResumeCycle(ctx context.Context, id string) error {
	return s.withCycle(id, func(c *cycle) error {
		started, gen := s.startedAt()
		if !started {
			return fmt.Errorf("%w: start the scheduler first", ErrPassive)
		}
		c.mu.Lock()
		c.held = false
		c.mu.Unlock()
		c.start(gen)
		return nil
	})
}

// ResetCycle forgets the progress of the cycle id: its next iteration is a first one,
// from the beginning of its collection or a fresh window. A running cycle restarts. The
// reset is saved under the scheduler's last activation: on an instance that another
// has taken over from, the store refuses it (ErrFenced) and the progress stays.
func (s *Scheduler) ResetCycle(ctx context.Context, id string) error {
	return s.withCycle(id, func(c *cycle) error {
		wasRunning := c.running()
		if err := c.stop(ctx); err != nil {
			return err
		}
		c.mu.Lock()
		c.loaded = true // the saved progress is what is being reset
		c.mu.Unlock()
		c.reset()
		started, gen := s.startedAt()
		err := c.save(ctx, gen)
		if wasRunning && started {
			c.start(gen) // from the store: reset, or as it was if the save failed
		}
		if err != nil {
			return fmt.Errorf("carousel: resetting cycle %s: %w", id, err)
		}
		return nil
	})
}

// Throttle returns the interval at which the cycle id publishes now.
func (s *Scheduler) Throttle(id string) (time.Duration, error) {
	c, err := s.cycle(id)
	if err != nil {
		return 0, err
	}
	return c.currentThrottle(), nil
}

// SetThrottle changes the throttle of the ThrottledWholeCollection cycle id, at once: its
// next publish comes d after the last one began. Windowed cycles compute their throttle
// (ErrNotAdjustable). The change lasts until the process restarts; the config file's
// throttle applies again then.
func (s *Scheduler) SetThrottle(id string, d time.Duration) error {
	if d <= 0 {
		return &FieldError{Field: "throttle", Value: d.String(), Problem: "must be positive"}
	}
	c, err := s.cycle(id)
	if err != nil {
		return err
	}
	return c.setThrottle(d)
}

// Start starts every cycle that was not stopped by hand, each from the progress saved in
// the store, under the toggle's generation. When the toggle says passive, Start promotes
// it if it is a Promoter, or returns ErrPassive.
func (s *Scheduler) Start(ctx context.Context) error {
	active, gen, err := s.askToggle(ctx)
	if err != nil {
		return fmt.Errorf("carousel: asking the toggle: %w", err)
	}
	if !active {
		p, ok := s.cfg.Toggle.(Promoter)
		if !ok {
			return ErrPassive
		}
		if gen, err = p.Promote(ctx); err != nil {
			return fmt.Errorf("carousel: promoting: %w", err)
		}
	}
	s.mu.Lock()
	s.active, s.gen = true, gen
	s.mu.Unlock()
	s.startAll()
	return nil
}

// startAll starts every cycle not held for the scheduler's activation: those running for
// another restart, from the store. The generation is read under the life lock, so that
// of a Start and a toggle's change racing, the later activation is the one that stands.
func (s *Scheduler) startAll() {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	s.started = true
	gen := s.gen
	cs := slices.Collect(maps.Values(s.cycles))
	s.mu.Unlock()
	for _, c := range cs {
		c.mu.Lock()
		held := c.held
		c.mu.Unlock()
		if !held {
			c.start(gen)
		}
	}
}

// Shutdown stops every cycle and saves its metadata. It returns when they have stopped,
// or with ctx's error when ctx ends first (they stop all the same).
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	s.started = false
	cs := slices.Collect(maps.Values(s.cycles))
	s.mu.Unlock()
	for _, c := range cs {
		c.mu.Lock()
		if c.cancel != nil {
			c.cancel()
		}
		c.mu.Unlock()
	}
	var errs []error
	for _, c := range cs {
		if err := c.stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run watches the toggle until ctx ends: when it turns active the cycles start, when it
// turns passive or fails they shut down, saving their metadata, and when it says active
// with a new generation (the instance lost the role and took it back between two
// questions) they restart, each from the progress saved in the store. An operator's Start
// or Shutdown stands until the toggle next changes. When ctx ends, Run shuts the cycles
// down and returns what Shutdown returned.
func (s *Scheduler) Run(ctx context.Context) error {
	t, began := s.newTicker()
	defer t.Stop()
	s.mu.Lock()
	s.run, s.asked = runTicks{began: began, interval: s.cfg.ToggleInterval}, time.Time{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.run = runTicks{}
		s.mu.Unlock()
		s.flushed.Notify()
	}()
	for {
		s.ask(ctx)
		select {
		case <-t.C():
		case <-ctx.Done():
			shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			return s.Shutdown(shutdownCtx)
		}
	}
}

// newTicker starts Run's ticker and returns it with the time it started at, on which its
// ticks fall every ToggleInterval. A clock other than the wall clock that moved while the
// ticker was started (a fake advanced by another goroutine) gets a new ticker, so that
// Flush knows the ticks the ticker has; see cycle.arm.
func (s *Scheduler) newTicker() (clock.Ticker, time.Time) {
	clk := s.cfg.Clock
	for try := 0; ; try++ {
		before := clk.Now()
		t := clk.NewTicker(s.cfg.ToggleInterval)
		if try == 8 || clk == clock.Real() || clk.Now().Equal(before) {
			return t, before
		}
		t.Stop()
	}
}

// ask asks the toggle and acts on its answer (watch), recording it for Flush.
func (s *Scheduler) ask(ctx context.Context) {
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	s.asking++
	s.mu.Unlock()
	s.watch(ctx)
	s.mu.Lock()
	s.asking--
	s.asked = now
	s.mu.Unlock()
	s.flushed.Notify()
}

// runTicks are the ticks of a Run: at began and every interval after it.
type runTicks struct {
	began    time.Time // zero when no Run is going
	interval time.Duration
}

// covers reports whether an ask that began at asked is the one Run makes by now, or a
// later one: whether it began at or after the last tick at or before now.
func (r runTicks) covers(asked, now time.Time) bool {
	switch {
	case asked.Before(r.began): // none yet
		return false
	case !asked.Before(now):
		return true
	}
	tick := func(t time.Time) int64 { return int64(t.Sub(r.began) / r.interval) }
	return tick(asked) >= tick(now)
}

// watch asks the toggle once and acts on a change of its answer.
func (s *Scheduler) watch(ctx context.Context) {
	active, gen, err := s.askToggle(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		s.cfg.Logger.Error("toggle failed; shutting the cycles down", "err", err)
		active = false
	}
	s.mu.Lock()
	changed := active != s.active || (active && gen != s.gen)
	s.active = active
	if active {
		s.gen = gen
	}
	s.mu.Unlock()
	if !changed {
		return
	}
	if active {
		s.cfg.Logger.Info("active: starting the cycles", "generation", gen)
		s.startAll()
		return
	}
	s.cfg.Logger.Info("passive: shutting the cycles down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.Shutdown(shutdownCtx); err != nil {
		s.cfg.Logger.Error("shutting the cycles down", "err", err)
	}
}

// askToggle asks the toggle, giving it ToggleInterval to answer: a toggle that hangs (a
// lease whose connection silently died) is a toggle that failed, and the cycles shut
// down rather than run on while another instance may take over.
func (s *Scheduler) askToggle(ctx context.Context) (bool, Generation, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ToggleInterval)
	defer cancel()
	return s.cfg.Toggle.Active(ctx)
}

// withCycle calls f with the cycle id under the life lock: an operation that stops or
// starts one cycle is serialized with every other.
func (s *Scheduler) withCycle(id string, f func(c *cycle) error) error {
	s.life.Lock()
	defer s.life.Unlock()
	c, err := s.cycle(id)
	if err != nil {
		return err
	}
	return f(c)
}

func (s *Scheduler) cycle(id string) (*cycle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cycles[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return c, nil
}

// startedAt reports whether the scheduler is started, and its activation's generation.
func (s *Scheduler) startedAt() (bool, Generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started, s.gen
}

func (c *cycle) status() CycleStatus {
	m := c.snapshot()
	if m.Throttle == 0 {
		m.Throttle = c.currentThrottle()
	}
	return CycleStatus{ID: c.cfg.Name, Config: c.cfg, Metadata: m}
}
