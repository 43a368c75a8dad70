package carousel

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
)

// t0 is the fake clock's start in every test.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// rig runs a Scheduler on a fake clock and drives it: every time a cycle begins to wait,
// the rig hears of it with the deadline and may move the clock there. Nothing sleeps.
type rig struct {
	t     *testing.T
	clk   *clocktest.Fake
	src   *MemorySource
	store MetadataStore
	s     *Scheduler
	pubs  chan published
	waits chan waiting

	held []waiting // waits taken from the queue but not acted on yet

	mu      sync.Mutex
	failPub map[string]error // item id → error its publish returns
}

// rigSetup is what a rig's scheduler is made of, for a test to change.
type rigSetup struct {
	Config
	Source    Source
	Publisher Publisher
}

type published struct {
	at        time.Time
	cycle     string
	id        string
	iteration int
	position  int
}

type waiting struct {
	cycle string
	until time.Time
}

func newRig(t *testing.T, mod func(*rigSetup)) *rig {
	t.Helper()
	r := &rig{t: t, clk: clocktest.NewFake(t0), src: NewMemorySource(), store: NewMemoryStore(),
		pubs: make(chan published, 1024), waits: make(chan waiting, 1024), failPub: map[string]error{}}
	r.s = r.scheduler(mod)
	return r
}

// scheduler returns a new scheduler on the rig's clock, source and store, as a restarted
// process would have.
func (r *rig) scheduler(mod func(*rigSetup)) *Scheduler {
	r.t.Helper()
	cfg := rigSetup{
		Config: Config{Store: r.store, Clock: r.clk, PageSize: 4},
		Source: r.src,
		Publisher: PublisherFunc(func(ctx context.Context, p Publication) error {
			r.pubs <- published{at: r.clk.Now(), cycle: p.Cycle, id: p.Item.ID, iteration: p.Iteration, position: p.Position}
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.failPub[p.Item.ID]
		}),
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewScheduler(cfg.Source, cfg.Publisher, cfg.Config)
	if err != nil {
		r.t.Fatal(err)
	}
	s.waitHook = func(id string, until time.Time) { r.waits <- waiting{id, until} }
	r.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			r.t.Errorf("Shutdown: %v", err)
		}
	})
	return s
}

func (r *rig) put(collection string, items ...Item) {
	r.t.Helper()
	if err := r.src.Put(collection, items...); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) add(cfgs ...CycleConfig) {
	r.t.Helper()
	for _, c := range cfgs {
		if err := r.s.Add(context.Background(), c); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *rig) start() {
	r.t.Helper()
	if err := r.s.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// bound is how long a test waits in real time for a goroutine to act on a fake-clock
// event before it gives up: a guard against a hang, not a delay anything relies on.
const bound = time.Minute

// publishes moves the clock from wait to wait until n publishes have happened, and
// returns them. before, when not nil, is called with each wait before the clock moves,
// and may stop the run by returning false.
func (r *rig) publishes(n int, before func(waiting) bool) []published {
	r.t.Helper()
	var got []published
	for len(got) < n {
		var w waiting
		if len(r.held) > 0 {
			w, r.held = r.held[0], r.held[1:]
		} else {
			select {
			case p := <-r.pubs:
				got = append(got, p)
				continue
			case w = <-r.waits:
			case <-time.After(bound):
				r.t.Fatalf("after %d publishes of %d, nothing happened for %v", len(got), n, bound)
			}
		}
		// A cycle publishes before it waits again, so the publishes it made before this
		// wait are queued already: take them first, and keep the wait for later if they
		// are enough.
		got = r.drain(got)
		if len(got) >= n {
			r.held = append(r.held, w)
			break
		}
		if before != nil && !before(w) {
			r.held = append(r.held, w)
			break
		}
		r.clk.Set(w.until)
	}
	return got
}

func (r *rig) drain(got []published) []published {
	for {
		select {
		case p := <-r.pubs:
			got = append(got, p)
		default:
			return got
		}
	}
}

// nextWait returns the next wait a cycle begins, without moving the clock.
func (r *rig) nextWait() waiting {
	r.t.Helper()
	if len(r.held) > 0 {
		w := r.held[0]
		r.held = r.held[1:]
		return w
	}
	select {
	case w := <-r.waits:
		if got := r.drain(nil); len(got) > 0 {
			r.t.Fatalf("unexpected publish of %s at %v", got[0].id, got[0].at.Sub(t0))
		}
		return w
	case p := <-r.pubs:
		r.t.Fatalf("unexpected publish of %s at %v", p.id, p.at.Sub(t0))
	case <-time.After(bound):
		r.t.Fatalf("no wait began within %v", bound)
	}
	return waiting{}
}

func (r *rig) failPublish(id string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failPub[id] = err
}

// offsets returns the publish times as offsets from t0, for readable failures.
func offsets(ps []published) []time.Duration {
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		out[i] = p.at.Sub(t0)
	}
	return out
}

func ids(ps []published) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.id
	}
	return out
}

func items(prefix string, n int, modified func(i int) time.Time) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{ID: prefix + string(rune('a'+i/26)) + string(rune('a'+i%26))}
		if modified != nil {
			out[i].Modified = modified(i)
		}
	}
	return out
}
