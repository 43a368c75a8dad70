package locks_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// holdingHook is a client's endpoint that holds the requests hold picks until the
// test releases them, so that newer notifications overtake them, and applies the
// receiver's rule (locks.Latest) to everything that arrives.
type holdingHook struct {
	*httptest.Server
	hold    func(locks.Body) bool
	held    chan locks.Body
	release chan struct{}
	done    chan struct{} // closed when the test ends: a held request is let go
	latest  locks.Latest

	mu       sync.Mutex
	arrivals []locks.Body // in the order they arrived
	dropped  int
}

func newHoldingHook(t *testing.T, hold func(locks.Body) bool) *holdingHook {
	h := &holdingHook{hold: hold, held: make(chan locks.Body, 10), release: make(chan struct{}), done: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b locks.Body
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Errorf("a notification that is not JSON: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if h.hold(b) {
			h.held <- b
			select {
			case <-h.release:
			case <-h.done:
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.arrivals = append(h.arrivals, b)
		if !h.latest.Keep(b) {
			h.dropped++
		}
	}))
	t.Cleanup(h.Close)
	t.Cleanup(func() { close(h.done) }) // before Close, which waits for the requests
	return h
}

// waitHeld waits for the next request the hook holds.
func (h *holdingHook) waitHeld(t *testing.T) locks.Body {
	t.Helper()
	select {
	case b := <-h.held:
		return b
	case <-time.After(time.Minute): // a guard against a hang
		t.Fatal("no request held within a minute")
		return locks.Body{}
	}
}

// sequencesOf returns the sequences of the sensor's notifications in the order they
// arrived.
func (h *holdingHook) sequencesOf(id locks.SensorID) []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int64
	for _, b := range h.arrivals {
		if b.SensorID == id {
			out = append(out, b.Sequence)
		}
	}
	return out
}

// A notifier of several workers delivers a sensor's notifications in no promised
// order: here a client is slow to take the first change of "door", and the second
// overtakes it; "gate"'s loss is held the same way, and its restoration overtakes it.
// A receiver that keeps, of each sensor, the notification of the highest sequence
// ends with each sensor's latest state, and drops the two that came late; the last to
// arrive is the stale one each time.
func TestReceiverKeepsTheLatestStateWhenNotificationsOvertakeEachOther(t *testing.T) {
	// Retries an hour apart: a request held for a while is not retried meanwhile.
	rig := newNotifierRig(t, locks.NotifierConfig{Workers: 4, Schedule: locks.Logarithmic{Unit: time.Hour},
		AttemptTimeout: 10 * time.Minute})
	hook := newHoldingHook(t, func(b locks.Body) bool {
		return b.SensorID == "door" && b.State == 1 || b.SensorID == "gate" && b.Event == locks.EventLost
	})
	registry(t, rig.store, []string{"door", "gate"}, hook.URL)
	ctx := t.Context()
	ts := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	delivered := func(what string) {
		t.Helper()
		assert.Equal(t, locks.Delivered, rig.store.next(t).Status, what)
	}

	require.NoError(t, rig.in.HandleBatch(ctx, msgs(ts(0), reading("gate", 1, ts(0)))))
	delivered("gate's first state")

	require.NoError(t, rig.in.HandleBatch(ctx, msgs(ts(1), reading("door", 1, ts(1)))))
	assert.Equal(t, locks.State(1), hook.waitHeld(t).State, "door's first change, held")
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(ts(2), reading("door", 0, ts(2)))))
	delivered("door's second change, while the first is held")

	_, err := rig.store.Update(ctx, []locks.SensorID{"gate"}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		c := cur["gate"]
		c.Lost = true
		return locks.Effects{States: []locks.Current{c}, Now: rig.clk.Now(),
			Notify: []locks.Change{{SensorID: "gate", Event: locks.EventLost, State: c.State, At: ts(3), ReadingAt: c.ReadingAt}}}, nil
	})
	require.NoError(t, err)
	rig.n.Wake()
	assert.Equal(t, locks.EventLost, hook.waitHeld(t).Event, "gate's loss, held")
	require.NoError(t, rig.in.HandleBatch(ctx, msgs(ts(4), reading("gate", 1, ts(4)))))
	delivered("gate's restoration, while its loss is held")

	// The held ones arrive last, one after the other.
	hook.release <- struct{}{}
	rig.store.next(t)
	hook.release <- struct{}{}
	rig.store.next(t)

	assert.Equal(t, []int64{2, 1}, hook.sequencesOf("door"), "door's notifications, as they arrived")
	assert.Equal(t, []int64{1, 3, 2}, hook.sequencesOf("gate"), "gate's notifications, as they arrived")
	hook.mu.Lock()
	dropped := hook.dropped
	hook.mu.Unlock()
	assert.Equal(t, 2, dropped, "notifications that came after a newer one")
	for _, id := range []locks.SensorID{"door", "gate"} {
		cur, err := rig.store.Current(ctx, id)
		require.NoError(t, err)
		kept, ok := hook.latest.Get(id)
		require.True(t, ok, "nothing kept of %s", id)
		assert.Equal(t, cur.Sequence, kept.Sequence, "%s: the receiver keeps the sensor's latest event", id)
		assert.Equal(t, cur.State, kept.State, "%s: the receiver's state", id)
	}
	kept, _ := hook.latest.Get("gate")
	assert.Equal(t, locks.EventRestored, kept.Event, "gate is back, whatever came after")
}

// Latest keeps the highest sequence of each sensor: an older or equal one is dropped,
// sensors are apart, and a Body of no sequence (0, a sender older than sequences) is
// never newer than one kept.
func TestLatest(t *testing.T) {
	var l locks.Latest
	_, ok := l.Get("a")
	assert.False(t, ok, "the zero Latest keeps nothing")
	a2 := locks.Body{NotificationID: 7, SensorID: "a", Event: locks.EventChanged, State: 1, Sequence: 2}
	assert.True(t, l.Keep(a2), "the first of a sensor")
	assert.False(t, l.Keep(locks.Body{NotificationID: 5, SensorID: "a", State: 0, Sequence: 1}), "an older one")
	assert.False(t, l.Keep(a2), "the same one again, a retry")
	assert.True(t, l.Keep(locks.Body{NotificationID: 3, SensorID: "b", State: 0, Sequence: 1}), "another sensor's")
	assert.False(t, l.Keep(locks.Body{NotificationID: 9, SensorID: "a", State: 0}), "one without a sequence")
	got, ok := l.Get("a")
	require.True(t, ok)
	assert.Equal(t, a2, got)
	a4 := locks.Body{NotificationID: 11, SensorID: "a", Event: locks.EventLost, State: 1, Sequence: 4}
	assert.True(t, l.Keep(a4), "a newer one, past a gap")
	got, _ = l.Get("a")
	assert.Equal(t, a4, got)
	got, _ = l.Get("b")
	assert.Equal(t, int64(1), got.Sequence)

	var wg sync.WaitGroup
	var c locks.Latest
	kept := make(chan int64, 100)
	for i := range 100 {
		wg.Go(func() {
			if c.Keep(locks.Body{SensorID: "x", Sequence: int64(i%10 + 1)}) {
				kept <- int64(i%10 + 1)
			}
		})
	}
	wg.Wait()
	close(kept)
	seen := map[int64]bool{}
	for k := range kept {
		assert.False(t, seen[k], "sequence %d kept twice", k)
		seen[k] = true
	}
	got, _ = c.Get("x")
	assert.Equal(t, int64(10), got.Sequence, "of concurrent Keeps, the highest stays")
	assert.True(t, seen[10], "the highest was kept")
}
