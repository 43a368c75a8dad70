package concurrent

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
)

// TestObserverCostsNoAllocation: a worker's run of a task, decoded message and listener
// call included, allocates nothing, with no Observer or with one, timed or not: the
// Call is passed by value.
func TestObserverCostsNoAllocation(t *testing.T) {
	m := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}}
	rc := RecoveryContext{Producer: 1}
	for _, tc := range []struct {
		name  string
		obs   Observer
		timed bool
	}{
		{"no observer", nil, false},
		{"observer, not timed", &countingObserver{}, false},
		{"observer, timed", &countingObserver{}, true},
	} {
		tracker := NewTaskLifecycleTracker()
		c, err := NewDispatcher(feed.BaseOddsFeedListener{}, tracker, Config{Threads: 1, Observer: tc.obs, TimingSample: 1})
		require.NoError(t, err)
		w := &worker{}
		allocs := testing.AllocsPerRun(200, func() {
			tk := task{msg: m, ticket: tracker.Allocate(rc), owner: c}
			if tc.timed {
				tk.at = monotonic()
			}
			c.run(w, &tk)
		})
		assert.Zero(t, allocs, tc.name)
		if o, ok := tc.obs.(*countingObserver); ok {
			assert.Equal(t, uint64(201), o.calls[CallReturned].Load(), tc.name) // AllocsPerRun runs it once more, to warm up
			if tc.timed {
				assert.Equal(t, uint64(201), o.timed.Load(), tc.name)
			} else {
				assert.Zero(t, o.timed.Load(), tc.name)
			}
		}
		require.NoError(t, c.Close(context.Background()))
	}
}

// countingObserver is what a metrics library does per call, in the small: a counter by
// result, and the timed calls' waits and durations summed (BenchmarkOverhead's
// Observer).
type countingObserver struct {
	calls                  [CallUnparsable + 1]atomic.Uint64
	timed                  atomic.Uint64
	waitSum, durationSum   atomic.Int64
	held, released, heldNs atomic.Int64
}

func (o *countingObserver) ListenerCalled(c Call) {
	o.calls[c.Result].Add(1)
	if c.Timed {
		o.timed.Add(1)
		o.waitSum.Add(int64(c.Wait))
		o.durationSum.Add(int64(c.Duration))
	}
}

func (o *countingObserver) ProducerUpHeld(int, feed.RecoveryKind) { o.held.Add(1) }

func (o *countingObserver) ProducerUpReleased(_ int, _ feed.RecoveryKind, held time.Duration) {
	o.released.Add(1)
	o.heldNs.Add(int64(held))
}

// nopObserver is told and does nothing: what is left is the pool's own cost of telling.
type nopObserver struct{}

func (nopObserver) ListenerCalled(Call)                                      {}
func (nopObserver) ProducerUpHeld(int, feed.RecoveryKind)                    {}
func (nopObserver) ProducerUpReleased(int, feed.RecoveryKind, time.Duration) {}

// BenchmarkWorkerRun: one worker's run of one task (a decoded message, its ticket
// allocated, started and completed, a listener that does nothing), on one goroutine, so
// that the Observer's cost per call shows apart from the load of a shared machine: with
// none, with one that does nothing (the pool's own cost of telling), with
// countingObserver (an atomic counter per call, uncontended here), and with every call
// timed (TimingSample 1: the clock read three times).
func BenchmarkWorkerRun(b *testing.B) {
	m := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}}}
	rc := RecoveryContext{Producer: 1}
	for _, tc := range []struct {
		name  string
		obs   Observer
		timed bool
	}{
		{"observer=none", nil, false},
		{"observer=nop", nopObserver{}, false},
		{"observer=counting", &countingObserver{}, false},
		{"observer=counting/timed", &countingObserver{}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tracker := NewTaskLifecycleTracker()
			c, err := NewDispatcher(feed.BaseOddsFeedListener{}, tracker, Config{Threads: 1, Observer: tc.obs})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(context.Background())
			w := &worker{}
			b.ReportAllocs()
			for b.Loop() {
				t := task{msg: m, ticket: tracker.Allocate(rc), owner: c}
				if tc.timed {
					t.at = monotonic()
				}
				c.run(w, &t)
			}
		})
	}
}
