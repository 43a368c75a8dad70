package concurrent_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// eventTypes are the seven event message types, in the order the tests cycle through them.
var eventTypes = []feed.MessageType{
	feed.MessageOddsChange, feed.MessageBetStop, feed.MessageBetSettlement,
	feed.MessageRollbackBetSettlement, feed.MessageBetCancel, feed.MessageRollbackBetCancel,
	feed.MessageFixtureChange,
}

// match returns the URN of the id-th match of a test (ids in URNs start at 1).
func match(id int) feed.URN { return feed.URN{Prefix: "sr", Type: "match", ID: int64(id) + 1} }

// message returns a decoded message of type t about event, numbered seq through its
// timestamp so that order can be checked after a round trip through XML.
func message(t feed.MessageType, event feed.URN, producer int, requestID int64, seq int) feed.Message {
	h := feed.Header{Producer: producer, Event: event, RequestID: requestID, Timestamp: time.UnixMilli(int64(1_700_000_000_000 + seq)).UTC()}
	switch t {
	case feed.MessageOddsChange:
		return &feed.OddsChange{Header: h}
	case feed.MessageBetStop:
		return &feed.BetStop{Header: h}
	case feed.MessageBetSettlement:
		return &feed.BetSettlement{Header: h, Certainty: 2}
	case feed.MessageRollbackBetSettlement:
		return &feed.RollbackBetSettlement{Header: h}
	case feed.MessageBetCancel:
		return &feed.BetCancel{Header: h}
	case feed.MessageRollbackBetCancel:
		return &feed.RollbackBetCancel{Header: h}
	case feed.MessageFixtureChange:
		return &feed.FixtureChange{Header: h}
	}
	panic("not an event type: " + t.String())
}

// rawEvent is m as a session hands it to a dispatcher: routing key and XML body, to be
// decoded on a worker.
func rawEvent(t testing.TB, m feed.Message) feed.Event {
	t.Helper()
	h := m.MessageHeader()
	key := feed.RoutingKey{Priority: feed.PriorityLow, Live: true, Type: m.Type(), SportID: 1, Event: h.Event}
	raw := key.String()
	parsed, err := feed.ParseRoutingKey(raw)
	require.NoError(t, err)
	return feed.Event{RawKey: raw, Key: parsed, Body: feedtest.Marshal(m), ReceivedAt: time.Now(),
		Producer: h.Producer, RequestID: h.RequestID}
}

// seq reads back the number message gave m.
func seq(m feed.Message) int {
	return int(m.MessageHeader().Timestamp.UnixMilli() - 1_700_000_000_000)
}

// testTimeout bounds every wait of these tests for something that must happen: a guard
// against a hang, generous enough that a slow, busy machine never reaches it.
const testTimeout = time.Minute

// waitFor waits on ch, failing the test after a generous bound.
func waitFor(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func newListener(t testing.TB, l feed.OddsFeedListener, cfg concurrent.Config) (*concurrent.Dispatcher, *concurrent.TaskLifecycleTracker) {
	t.Helper()
	tracker := concurrent.NewTaskLifecycleTracker()
	c, err := concurrent.NewDispatcher(l, tracker, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c, tracker
}

func TestConfigRefusedWithTheFieldNamed(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	l := feed.BaseOddsFeedListener{}
	for _, tc := range []struct {
		cfg  concurrent.Config
		want string
	}{
		{concurrent.Config{Threads: -1}, "Config.Threads -1"},
		{concurrent.Config{Threads: 1 << 20}, "Config.Threads 1048576"},
		{concurrent.Config{QueueSize: -5}, "Config.QueueSize -5"},
	} {
		_, err := concurrent.NewDispatcher(l, tracker, tc.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := concurrent.NewDispatcher(nil, tracker, concurrent.Config{})
	assert.ErrorContains(t, err, "listener is nil")
	_, err = concurrent.NewDispatcher(l, nil, concurrent.Config{})
	assert.ErrorContains(t, err, "tracker is nil")
}

func TestDefaults(t *testing.T) {
	c, _ := newListener(t, feed.BaseOddsFeedListener{}, concurrent.Config{})
	assert.Len(t, c.Stats().Workers, concurrent.DefaultThreads)
}

// orderRecorder records, per event, the type and number of every message it receives.
// gate, when set, runs first in every call and may block.
type orderRecorder struct {
	gate func(ctx context.Context, m feed.Message) error

	mu      sync.Mutex
	got     map[feed.URN][]string
	n       int
	waiters map[int]chan struct{} // closed when n reaches the key
	all     <-chan struct{}       // closed when every message expected has arrived
}

func newOrderRecorder(want int) *orderRecorder {
	r := &orderRecorder{got: make(map[feed.URN][]string), waiters: make(map[int]chan struct{})}
	r.all = r.reached(want)
	return r
}

// reached returns a channel closed once n messages have arrived.
func (r *orderRecorder) reached(n int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.waiters[n]
	if ch == nil {
		ch = make(chan struct{})
		r.waiters[n] = ch
		if r.n >= n {
			close(ch)
		}
	}
	return ch
}

func (r *orderRecorder) record(ctx context.Context, m feed.Message) error {
	if r.gate != nil {
		if err := r.gate(ctx, m); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := m.MessageHeader()
	r.got[h.Event] = append(r.got[h.Event], fmt.Sprintf("%s#%d", m.Type(), seq(m)))
	r.n++
	if ch := r.waiters[r.n]; ch != nil {
		close(ch)
	}
	return nil
}

func (r *orderRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *orderRecorder) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnRollbackBetSettlement(ctx context.Context, m *feed.RollbackBetSettlement) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnBetCancel(ctx context.Context, m *feed.BetCancel) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnRollbackBetCancel(ctx context.Context, m *feed.RollbackBetCancel) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnFixtureChange(ctx context.Context, m *feed.FixtureChange) error {
	return r.record(ctx, m)
}
func (r *orderRecorder) OnUnparsableMessage(context.Context, *feed.UnparsableMessage) error {
	return nil
}

// TestPerMatchOrderAcrossAllWorkers sends 1,000 matches × every event type from four
// goroutines, half as raw events (decoded on the workers) and half decoded, and checks
// that each match's messages arrive in the order they were dispatched and that every
// worker took part, all of them at once: the first calls block until as many calls as
// there are workers are in progress together.
func TestPerMatchOrderAcrossAllWorkers(t *testing.T) {
	const (
		matches   = 1000
		rounds    = 2
		threads   = 10
		producers = 4
	)
	total := matches * rounds * len(eventTypes)
	rec := newOrderRecorder(total)
	var inFlight atomic.Int32
	allBusy := make(chan struct{})
	var once sync.Once
	rec.gate = func(ctx context.Context, _ feed.Message) error {
		select {
		case <-allBusy:
			return nil
		default:
		}
		if inFlight.Add(1) == threads {
			once.Do(func() { close(allBusy) })
		}
		select {
		case <-allBusy:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c, tracker := newListener(t, rec, concurrent.Config{Threads: threads})
	ctx := testContext(t)

	var wg sync.WaitGroup
	for g := range producers {
		wg.Go(func() {
			for r := range rounds {
				for i, typ := range eventTypes {
					for id := g; id < matches; id += producers {
						m := message(typ, match(id), 1, 0, r*len(eventTypes)+i)
						var err error
						if g%2 == 0 {
							err = c.Dispatch(ctx, rawEvent(t, m))
						} else {
							err = dispatchDecoded(ctx, c, m)
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, allBusy, "every worker in a listener call at once")
	waitFor(t, rec.all, "every message")

	want := make([]string, 0, rounds*len(eventTypes))
	for r := range rounds {
		for i, typ := range eventTypes {
			want = append(want, fmt.Sprintf("%s#%d", typ, r*len(eventTypes)+i))
		}
	}
	for id := range matches {
		require.Equal(t, want, rec.got[match(id)], "match %d", id)
	}
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	// A task is complete in the tracker a moment before its worker counts it: Close, which
	// returns once the workers are gone, makes the counters final.
	require.NoError(t, c.Close(ctx))
	st := c.Stats()
	assert.Equal(t, uint64(total), st.Dispatched)
	assert.Equal(t, uint64(total), st.Completed)
	assert.Zero(t, st.Queued)
	for i, n := range st.Workers {
		assert.NotZero(t, n, "worker %d did nothing", i)
	}
	counts := tracker.Counts(concurrent.RecoveryContext{Producer: 1})
	assert.Equal(t, concurrent.TaskCounts{Allocated: uint64(total), Started: uint64(total), Completed: uint64(total)}, counts)
}

// dispatchDecoded queues m through the listener method of its type.
func dispatchDecoded(ctx context.Context, c *concurrent.Dispatcher, m feed.Message) error {
	switch m := m.(type) {
	case *feed.OddsChange:
		return c.OnOddsChange(ctx, m)
	case *feed.BetStop:
		return c.OnBetStop(ctx, m)
	case *feed.BetSettlement:
		return c.OnBetSettlement(ctx, m)
	case *feed.RollbackBetSettlement:
		return c.OnRollbackBetSettlement(ctx, m)
	case *feed.BetCancel:
		return c.OnBetCancel(ctx, m)
	case *feed.RollbackBetCancel:
		return c.OnRollbackBetCancel(ctx, m)
	case *feed.FixtureChange:
		return c.OnFixtureChange(ctx, m)
	}
	return fmt.Errorf("not an event message: %T", m)
}

// TestStalledMatchDelaysNoOtherMatch blocks every call for one match until the test
// releases it: the other matches' messages all arrive meanwhile, and the stalled match's
// arrive afterwards, in order.
func TestStalledMatchDelaysNoOtherMatch(t *testing.T) {
	const matches, perMatch = 200, 5
	stalled := match(0)
	rec := newOrderRecorder(matches * perMatch)
	release := make(chan struct{})
	entered := make(chan struct{}, perMatch)
	rec.gate = func(ctx context.Context, m feed.Message) error {
		if m.MessageHeader().Event == stalled {
			entered <- struct{}{}
			<-release
		}
		return nil
	}
	c, tracker := newListener(t, rec, concurrent.Config{Threads: 4})
	ctx := testContext(t)
	for n := range perMatch {
		for id := range matches {
			producer := 1
			if match(id) == stalled {
				producer = 2 // its own tracker context, so the test can wait for the others alone
			}
			require.NoError(t, c.OnBetStop(ctx, message(feed.MessageBetStop, match(id), producer, 0, n).(*feed.BetStop)))
		}
	}
	waitFor(t, entered, "the stalled match's first call")
	// The stalled call holds one worker; the other three deliver everything else.
	require.NoError(t, tracker.Wait(ctx, concurrent.RecoveryContext{Producer: 1}))
	assert.Equal(t, (matches-1)*perMatch, rec.count())
	assert.Empty(t, rec.got[stalled])
	st := c.Stats()
	assert.Equal(t, 1, st.Running, "only the stalled call is in progress")
	assert.LessOrEqual(t, st.Queued, perMatch-1, "only the stalled match's messages wait")
	assert.Equal(t, perMatch, tracker.Pending(concurrent.RecoveryContext{Producer: 2}), "the stalled match's messages are all pending")
	close(release)
	waitFor(t, rec.all, "the stalled match's messages")
	want := []string{}
	for n := range perMatch {
		want = append(want, fmt.Sprintf("bet_stop#%d", n))
	}
	assert.Equal(t, want, rec.got[stalled])
}
