package changes

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// ErrClosed is returned by Run, Poll and Flush on a closed manager.
var ErrClosed = errors.New("changes: manager closed")

// Manager polls the lists of fixture and result changes and tells its Listener of each
// change once. See the package documentation.
type Manager struct {
	api      API
	listener Listener
	cfg      Config

	// polling serializes the polls, Run's and Poll's, and guards what follows it.
	polling sync.Mutex
	loaded  bool    // the cursors came from the Store
	dirty   [3]bool // by kind: the cursor moved since its last successful save

	mu      sync.Mutex // guards what follows it
	cursors [3]cursor  // by kind
	stats   Stats
	ran     bool          // Run was called
	closed  bool          // Close was called
	began   time.Time     // when Run began: its polls fall due at began plus a multiple of Interval
	polled  int64         // the number of Run's last poll (its multiple of Interval); -1 before the first
	moved   chan struct{} // closed and replaced each time polled moves, for Flush

	closing chan struct{} // closed by Close
	started chan struct{} // closed when Run begins
	done    chan struct{} // closed when Run returns
}

// New returns a manager that reads the lists through api and tells l of each change. It
// polls nothing until Run or Poll.
func New(api API, l Listener, cfg Config) (*Manager, error) {
	if api == nil || l == nil {
		return nil, errors.New("changes: New needs an API and a Listener")
	}
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	return &Manager{api: api, listener: l, cfg: cfg, polled: -1,
		closing: make(chan struct{}), started: make(chan struct{}), done: make(chan struct{}), moved: make(chan struct{})}, nil
}

// Run loads the cursors from the Store, polls both lists at once, then every Interval,
// until ctx ends or Close is called. A poll due while the one before runs is made as that
// one ends; polls missed meanwhile are not made up, the next one reading everything
// since the cursors anyway. A poll that fails (the API down, a list it cannot read, a
// Store that cannot load) is reported to Config.OnError and made again at the next
// Interval. When ctx ends, Run saves each cursor whose last save failed before it
// returns (when Close stops it, Close does).
//
// Run returns nil once Close stopped it, ctx.Err() when ctx ended, and ErrClosed when
// the manager was closed before. A manager runs once.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	switch {
	case m.closed:
		m.mu.Unlock()
		return ErrClosed
	case m.ran:
		m.mu.Unlock()
		return errors.New("changes: Run called twice")
	}
	m.ran = true
	m.began = m.cfg.Clock.Now()
	close(m.started)
	m.mu.Unlock()
	defer close(m.done)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.closing:
			cancel()
		case <-runCtx.Done():
		}
	}()
	m.loop(runCtx)
	select {
	case <-m.closing:
		return nil // Close saves what is left to save
	default:
	}
	saveCtx, cancelSave := saveContext(ctx) // ctx has ended
	defer cancelSave()
	m.polling.Lock()
	_ = m.saveDirty(saveCtx) // reported as it happened
	m.polling.Unlock()
	return ctx.Err()
}

// loop polls at each multiple of Interval after began until ctx ends.
func (m *Manager) loop(ctx context.Context) {
	clk := m.cfg.Clock
	polled := int64(-1)
	for {
		if due := m.due(clk.Now()); due > polled {
			_ = m.pollAll(ctx) // reported as it happened
			polled = due
			m.setPolled(due)
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if !m.wait(ctx, clk, polled+1) {
			return
		}
	}
}

// due returns the number of the last poll due by now: 0 at began, 1 an Interval later.
func (m *Manager) due(now time.Time) int64 {
	return int64(now.Sub(m.began) / m.cfg.Interval)
}

// wait waits until poll n falls due, and reports false if ctx ended first.
func (m *Manager) wait(ctx context.Context, clk clock.Clock, n int64) bool {
	at := m.began.Add(time.Duration(n) * m.cfg.Interval)
	t := arm(clk, at)
	defer t.Stop()
	if m.due(clk.Now()) >= n {
		return true // the clock reached it while the timer was set
	}
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// arm returns a timer of clk that fires at at.
//
// A Clock's timer is set by a duration, which the clock counts from its own time when
// the timer is set, read just before. A clock other than the wall clock that moved in
// between (a fake advanced by a test) would leave the timer late by that move, and a
// test waiting in Flush for the poll at at would wait for ever: so the timer is set
// again for what is left, until the clock stood still around it, as heartbeat's Run
// does. The wall clock never stands still, and its moves are too small to matter.
func arm(clk clock.Clock, at time.Time) clock.Timer {
	before := clk.Now()
	t := clk.NewTimer(at.Sub(before))
	for range 8 {
		after := clk.Now()
		if after.Equal(before) || clk == clock.Real() {
			break
		}
		before = after
		t.Reset(at.Sub(before))
	}
	return t
}

// Poll polls both lists now, beside Run's schedule (which it does not move), and
// returns once the changes it found have been delivered. It returns what went wrong,
// joined, as it was also reported to Config.OnError; ErrClosed on a closed manager.
// It waits for a poll of Run's in progress to end first, and so must not be called from
// the Listener.
func (m *Manager) Poll(ctx context.Context) error {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return m.pollAll(ctx)
}

// Close stops Run, ending the poll in progress (its listener call's context ends; a
// change the listener does not take is offered again by the next manager on the Store),
// and waits for Run to return, or for ctx to end (then it returns ctx.Err()). It then
// saves, within ctx, each cursor whose last save failed, and returns what failed. Close
// may be called more than once, and before Run, which then returns ErrClosed.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.closing)
	}
	ran := m.ran
	m.mu.Unlock()
	if ran {
		select {
		case <-m.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.polling.Lock()
	defer m.polling.Unlock()
	return m.saveDirty(ctx)
}
