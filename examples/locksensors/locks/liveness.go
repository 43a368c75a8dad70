package locks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/heartbeat"
	"github.com/feedkit/feedkit/internal/broadcast"
)

// DefaultSilence is how long a sensor may stay silent before it is lost: sensors send
// a reading at least once an hour.
const DefaultSilence = time.Hour

// LivenessConfig holds a Liveness's settings; the zero value has the defaults.
type LivenessConfig struct {
	// Silence is how long without a reading makes a sensor lost; 0 means DefaultSilence.
	Silence time.Duration
	// Tick is how late after its deadline a silent sensor may be found; 0 is
	// heartbeat.DefaultTick (1s).
	Tick time.Duration
	// Resync is how often the monitor is brought up to date with the Store, for the
	// sensors other processes hear from; 0 means Silence/4.
	Resync time.Duration
	// Retry spaces the attempts to record a loss the Store failed; the zero Backoff is
	// 100ms doubling to 30s with jitter.
	Retry Backoff
	// Notified, if set, is called after a loss created notifications (Notifier.Wake).
	Notified func()
	// Checked, if set, is called once a silence the monitor found has been checked
	// against the Store: lost is true when it was recorded as a loss, false when the
	// sensor was heard from meanwhile, deleted, or lost already.
	Checked func(id SensorID, lost bool)
	Clock   clock.Clock
	Logger  *slog.Logger
	// Observer is told of every loss recorded, every false alarm and every store error,
	// for metrics; nil tells no one.
	Observer Observer
}

// Liveness finds the sensors that fell silent, with a heartbeat.Monitor fed by the
// Ingester (Seen), and records each loss in the Store, which notifies the linked clients
// ("lost"). The restoration is the Ingester's: the first reading of a lost sensor.
//
// Several processes may share a Store, each hearing from some of the sensors. Each
// process's monitor starts from the Store's last-seen times and is brought up to date
// every Resync; before a loss is recorded, the Store's last-seen time is checked under
// the sensor's lock, so a sensor another process heard from recently is not lost, and
// of two processes finding the same loss, one records it.
type Liveness struct {
	store     Store
	cfg       LivenessConfig
	m         *heartbeat.Monitor[SensorID]
	mu        sync.Mutex
	owed      []SensorID // found silent, not yet taken to be recorded
	recording int        // taken from owed, not yet recorded
	found     chan struct{}
	recorded  broadcast.Signal // notified as each owed loss is recorded
	stats     livenessCounters
}

// LivenessStats counts what a Liveness did.
type LivenessStats struct {
	Tracked     int    `json:"tracked"`      // sensors the monitor follows
	Lost        uint64 `json:"lost"`         // losses recorded
	FalseAlarms uint64 `json:"false_alarms"` // silences another process had heard the end of
	Errors      uint64 `json:"errors"`       // store errors (each retried)
}

type livenessCounters struct{ lost, falseAlarms, errors atomic.Uint64 }

// NewLiveness returns a Liveness that records the losses in store, or an error naming
// the bad field of cfg.
func NewLiveness(store Store, cfg LivenessConfig) (*Liveness, error) {
	if store == nil {
		return nil, errors.New("locks: NewLiveness: store is nil")
	}
	if cfg.Silence < 0 || cfg.Tick < 0 || cfg.Resync < 0 {
		return nil, &FieldError{Field: "LivenessConfig", Problem: "Silence, Tick and Resync must not be negative"}
	}
	cfg.Silence = cmp.Or(cfg.Silence, DefaultSilence)
	cfg.Resync = cmp.Or(cfg.Resync, cfg.Silence/4)
	if cfg.Retry == (Backoff{}) {
		cfg.Retry = Backoff{Initial: 100 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.5}
	}
	if err := cfg.Retry.Validate("LivenessConfig.Retry"); err != nil {
		return nil, err
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Liveness{store: store, cfg: cfg, found: make(chan struct{}, 1)}
	m, err := heartbeat.New(heartbeat.Config[SensorID]{
		Timeout: cfg.Silence,
		Tick:    cfg.Tick,
		Clock:   cfg.Clock,
		OnLost:  func(id SensorID, _ time.Time) { l.owe(id) },
	})
	if err != nil {
		return nil, fmt.Errorf("LivenessConfig: %w", err)
	}
	l.m = m
	return l, nil
}

// Seen tells the monitor the sensor was heard from at at (the Ingester's Seen).
func (l *Liveness) Seen(id SensorID, at time.Time) { l.m.BeatAt(id, at) }

// Stats returns the counters.
func (l *Liveness) Stats() LivenessStats {
	return LivenessStats{Tracked: l.m.Len(), Lost: l.stats.lost.Load(),
		FalseAlarms: l.stats.falseAlarms.Load(), Errors: l.stats.errors.Load()}
}

// owe queues a silent sensor for record; the monitor calls it, and must not wait on
// the Store.
func (l *Liveness) owe(id SensorID) {
	l.mu.Lock()
	l.owed = append(l.owed, id)
	l.mu.Unlock()
	select {
	case l.found <- struct{}{}:
	default:
	}
}

// Run loads the Store's last-seen times into the monitor, then finds and records the
// silent sensors until ctx ends, and returns nil when it has.
func (l *Liveness) Run(ctx context.Context) error {
	if err := l.retry(ctx, l.sync); err != nil {
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { _ = l.m.Run(ctx); return nil })
	g.Go(func() error { l.record(ctx); return nil })
	g.Go(func() error {
		t := l.cfg.Clock.NewTicker(l.cfg.Resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C():
				if err := l.sync(ctx); err != nil && ctx.Err() == nil {
					l.storeFailed()
					l.cfg.Logger.Error("locks: resync the liveness monitor", "err", err)
				}
			}
		}
	})
	return g.Wait()
}

// sync merges the Store's last-seen times into the monitor: newer news of a sensor (a
// reading another process stored) moves its deadline; the monitor's own newer beats
// stay.
func (l *Liveness) sync(ctx context.Context) error {
	cur, err := l.store.Liveness(ctx)
	if err != nil {
		return fmt.Errorf("read the sensors' last-seen times: %w", err)
	}
	entries := make([]heartbeat.Entry[SensorID], 0, len(cur))
	for _, c := range cur {
		entries = append(entries, heartbeat.Entry[SensorID]{Key: c.SensorID, LastSeen: c.LastSeen, Lost: c.Lost})
	}
	return l.m.Restore(entries)
}

// record writes the losses the monitor finds, retrying those the Store fails.
func (l *Liveness) record(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.found:
		}
		l.mu.Lock()
		owed := l.owed
		l.owed = nil
		l.recording = len(owed)
		l.mu.Unlock()
		for _, id := range owed {
			if l.retry(ctx, func(ctx context.Context) error { return l.markLost(ctx, id) }) != nil {
				return
			}
			l.mu.Lock()
			l.recording--
			l.mu.Unlock()
			l.recorded.Notify()
		}
	}
}

// Flush does at once what Run does when the clock passes a tick: it finds the sensors
// silent by the clock's time now, and returns once Run has recorded each (or found it
// heard from meanwhile, deleted, or lost already), or with ctx.Err() when ctx ends
// first, as it does while a failing Store is being retried.
//
// It is for tests on a fake clock (package clocktest). Run's monitor wakes at the tick
// the clock fires on its way, and may read the time before the clock has got where the
// test moved it, then wait for a later tick: after moving the clock, a test calls Flush
// and sees every loss due by then in the Store, whenever Run's goroutines wake. Flush
// needs Run, which does the recording.
func (l *Liveness) Flush(ctx context.Context) error {
	if err := l.m.Flush(ctx); err != nil {
		return err
	}
	return l.recorded.Wait(ctx, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.owed) == 0 && l.recording == 0
	})
}

// retry calls f until it succeeds or ctx ends, waiting on the clock between attempts.
func (l *Liveness) retry(ctx context.Context, f func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := f(ctx)
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		l.storeFailed()
		l.cfg.Logger.Error("locks: liveness", "err", err, "attempt", attempt+1)
		t := l.cfg.Clock.NewTimer(l.cfg.Retry.Delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C():
		}
	}
}

// storeFailed counts a Store error.
func (l *Liveness) storeFailed() {
	l.stats.errors.Add(1)
	if o := l.cfg.Observer; o != nil {
		o.LockStoreFailed(PartLiveness)
	}
}

// markLost records that the sensor is lost, unless the Store knows better: it was
// deleted, is lost already, or was heard from within Silence.
func (l *Liveness) markLost(ctx context.Context, id SensorID) error {
	now := l.cfg.Clock.Now().UTC().Truncate(time.Microsecond)
	var (
		exists, marked bool
		heard          time.Time
	)
	n, err := l.store.Update(ctx, []SensorID{id}, func(cur map[SensorID]Current) (Effects, error) {
		c, ok := cur[id]
		exists, marked, heard = ok, false, time.Time{}
		if !ok || c.Lost || c.LastSeen.IsZero() {
			return Effects{}, nil
		}
		if now.Sub(c.LastSeen) < l.cfg.Silence {
			heard = c.LastSeen
			return Effects{}, nil
		}
		c.Lost, marked = true, true
		return Effects{States: []Current{c}, Notify: []Change{{SensorID: id, Event: EventLost, State: c.State, At: now, ReadingAt: c.ReadingAt}}, Now: now}, nil
	})
	if err != nil {
		return fmt.Errorf("record that sensor %q is lost: %w", id, err)
	}
	switch {
	case !exists:
		l.m.Forget(id)
	case !heard.IsZero():
		l.stats.falseAlarms.Add(1)
		if o := l.cfg.Observer; o != nil {
			o.LockFalseAlarm()
		}
		l.m.BeatAt(id, heard)
	case marked:
		l.stats.lost.Add(1)
		if o := l.cfg.Observer; o != nil {
			o.LockSensorLost(n)
		}
		l.cfg.Logger.Info("locks: sensor lost", "sensor", id, "notifications", n)
		if n > 0 && l.cfg.Notified != nil {
			l.cfg.Notified()
		}
	}
	if l.cfg.Checked != nil {
		l.cfg.Checked(id, marked)
	}
	return nil
}
