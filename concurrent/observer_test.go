package concurrent_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// callKey is what a recordingObserver counts a call by: every label of it.
type callKey struct {
	pool     string
	producer int
	typ      feed.MessageType
	result   concurrent.CallResult
}

// upKey is what a recordingObserver counts the ups held and released by.
type upKey struct {
	producer int
	kind     feed.RecoveryKind
}

// recordingObserver counts everything it is told, and keeps the calls whose times are
// wrong: timed with a negative wait or duration, or untimed with a time set.
type recordingObserver struct {
	mu                 sync.Mutex
	calls              map[callKey]int
	timed, untimed     int
	badTimes           []concurrent.Call
	held, released     map[upKey]int
	negativeHeld       int
	heldAtMostReleased bool // false once a release was told for a key with no hold told before
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{calls: make(map[callKey]int), held: make(map[upKey]int), released: make(map[upKey]int),
		heldAtMostReleased: true}
}

func (o *recordingObserver) ListenerCalled(c concurrent.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls[callKey{c.Pool, c.Producer, c.Type, c.Result}]++
	switch {
	case c.Timed && (c.Wait < 0 || c.Duration < 0), !c.Timed && (c.Wait != 0 || c.Duration != 0):
		o.badTimes = append(o.badTimes, c)
	case c.Timed:
		o.timed++
	default:
		o.untimed++
	}
}

func (o *recordingObserver) ProducerUpHeld(producer int, kind feed.RecoveryKind) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held[upKey{producer, kind}]++
}

func (o *recordingObserver) ProducerUpReleased(producer int, kind feed.RecoveryKind, held time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := upKey{producer, kind}
	o.released[k]++
	if o.released[k] > o.held[k] {
		o.heldAtMostReleased = false
	}
	if held < 0 {
		o.negativeHeld++
	}
}

// byResult sums the calls by result.
func (o *recordingObserver) byResult() map[concurrent.CallResult]uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	sums := make(map[concurrent.CallResult]uint64)
	for k, n := range o.calls {
		sums[k.result] += uint64(n)
	}
	return sums
}

func (o *recordingObserver) snapshot() (calls map[callKey]int, timed, untimed int, bad []concurrent.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	calls = make(map[callKey]int, len(o.calls))
	for k, n := range o.calls {
		calls[k] = n
	}
	return calls, o.timed, o.untimed, append([]concurrent.Call(nil), o.badTimes...)
}

// noCashouts hides a listener's OnCashout: it is an OddsFeedListener only.
type noCashouts struct{ feed.OddsFeedListener }

// outcomeBySeq is how the observer tests' listeners end the call for message number n:
// one in ten fails, one in ten panics.
func outcomeBySeq(n int) concurrent.CallResult {
	switch n % 10 {
	case 3:
		return concurrent.CallFailed
	case 7:
		return concurrent.CallPanicked
	}
	return concurrent.CallReturned
}

// failingRecorder is a recorder whose calls end as outcomeBySeq says.
func failingRecorder() *feedtest.Recorder {
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		switch outcomeBySeq(seq(m)) {
		case concurrent.CallFailed:
			return errors.New("database down")
		case concurrent.CallPanicked:
			panic("listener bug")
		}
		return nil
	}
	return rec
}

func cashout(event feed.URN, producer, n int) *feed.Cashout {
	return &feed.Cashout{Header: feed.Header{Producer: producer, Event: event,
		Timestamp: time.UnixMilli(int64(1_700_000_000_000 + n)).UTC()}}
}

// TestObserverToldOfEveryPoolCall: N messages through the two listeners of a Pool,
// raw and decoded, some failing, some panicking, some unparsable, and cashouts for a
// listener with OnCashout and one without: the Observer is told of each call once, with
// the pool's name, the message's producer and type and how the call ended, and its sums
// by result are the listeners' Stats. With TimingSample 1 every call is timed.
func TestObserverToldOfEveryPoolCall(t *testing.T) {
	obs := newRecordingObserver()
	p, _ := newPool(t, concurrent.Config{Threads: 3, Name: "odds", Observer: obs, TimingSample: 1})
	a := poolListener(t, p, noCashouts{failingRecorder()})
	b := poolListener(t, p, failingRecorder())
	ctx := testContext(t)

	want := make(map[callKey]int)
	const n = 300
	for i := range n {
		c := []*concurrent.Dispatcher{a, b}[i%2]
		producer := 1 + i%3
		typ := eventTypes[i%len(eventTypes)]
		m := message(typ, match(i%5), producer, 0, i)
		if i%4 == 0 {
			require.NoError(t, dispatchDecoded(ctx, c, m))
		} else {
			require.NoError(t, c.Dispatch(ctx, rawEvent(t, m)))
		}
		want[callKey{"odds", producer, typ, outcomeBySeq(i)}]++
	}
	// Unparsable, on the workers: a body that does not decode (its type is known), a
	// body too large and a malformed routing key (no type), and one passed on through the
	// listener method. Each is one call, with no producer.
	bad := rawEvent(t, message(feed.MessageBetStop, match(1), 2, 0, n))
	bad.Body = []byte("<bet_stop")
	require.NoError(t, a.Dispatch(ctx, bad))
	want[callKey{"odds", 0, feed.MessageBetStop, concurrent.CallUnparsable}]++
	tooLarge := rawEvent(t, message(feed.MessageOddsChange, match(2), 2, 0, n+1))
	tooLarge.Err = feed.ErrBodyTooLarge
	require.NoError(t, b.Dispatch(ctx, tooLarge))
	badKey := feed.Event{RawKey: "not.a.key", Body: []byte("<bet_stop/>"), Producer: 1,
		Err: &feed.RoutingKeyError{Key: "not.a.key", Reason: "test"}}
	require.NoError(t, a.Dispatch(ctx, badKey))
	require.NoError(t, b.OnUnparsableMessage(ctx, &feed.UnparsableMessage{RoutingKey: "x", Event: match(3)}))
	want[callKey{"odds", 0, feed.MessageUnknown, concurrent.CallUnparsable}] += 3
	// Cashouts: a call for b, raw and decoded; none for a, which has no OnCashout.
	const cashoutSeq = 2 * n // ends as outcomeBySeq says: returned
	require.NoError(t, b.Dispatch(ctx, rawEvent(t, cashout(match(4), 3, cashoutSeq))))
	require.NoError(t, b.OnCashout(ctx, cashout(match(4), 3, cashoutSeq)))
	want[callKey{"odds", 3, feed.MessageCashout, concurrent.CallReturned}] += 2
	require.NoError(t, a.Dispatch(ctx, rawEvent(t, cashout(match(4), 3, cashoutSeq))))
	require.NoError(t, a.OnCashout(ctx, cashout(match(4), 3, cashoutSeq)))
	const unhandled = 2

	// Close returns once every call has ended and been told.
	require.NoError(t, a.Close(ctx))
	require.NoError(t, b.Close(ctx))

	calls, timed, untimed, bad2 := obs.snapshot()
	assert.Equal(t, want, calls)
	total := 0
	for _, k := range want {
		total += k
	}
	assert.Equal(t, total, timed, "TimingSample 1 times every call")
	assert.Zero(t, untimed)
	assert.Empty(t, bad2, "no negative wait or duration")

	sa, sb := a.Stats(), b.Stats()
	sums := obs.byResult()
	assert.Equal(t, sa.Failed+sb.Failed, sums[concurrent.CallFailed])
	assert.Equal(t, sa.Panicked+sb.Panicked, sums[concurrent.CallPanicked])
	assert.Equal(t, sa.Unparsable+sb.Unparsable, sums[concurrent.CallUnparsable])
	assert.Equal(t, sa.Completed+sb.Completed-unhandled,
		sums[concurrent.CallReturned]+sums[concurrent.CallFailed]+sums[concurrent.CallPanicked]+sums[concurrent.CallUnparsable],
		"every task completed is one call, but for the cashouts of a listener without OnCashout")
	assert.Equal(t, uint64(n/10), sums[concurrent.CallFailed])
	assert.Equal(t, uint64(n/10), sums[concurrent.CallPanicked])
}

// TestObserverToldOfInlineUnparsableCalls: with HandleErrorsAsynchronously false, the
// unroutable messages delivered on the dispatching goroutine are told too, timed with no
// wait.
func TestObserverToldOfInlineUnparsableCalls(t *testing.T) {
	obs := newRecordingObserver()
	c, _ := newListener(t, failingRecorder(), concurrent.Config{Threads: 1, Name: "sync", Observer: obs,
		TimingSample: 1, HandleErrorsAsynchronously: new(false)})
	ctx := testContext(t)
	for i := range 3 {
		ev := rawEvent(t, message(feed.MessageOddsChange, match(i), 1, 0, i))
		ev.Err = feed.ErrBodyTooLarge
		require.NoError(t, c.Dispatch(ctx, ev))
	}
	require.NoError(t, c.Close(ctx))
	calls, timed, _, bad := obs.snapshot()
	assert.Equal(t, map[callKey]int{{"sync", 0, feed.MessageUnknown, concurrent.CallUnparsable}: 3}, calls)
	assert.Equal(t, 3, timed)
	assert.Empty(t, bad)
	assert.Equal(t, uint64(3), c.Stats().Unparsable)
}

// TestObserverTimesOneCallInTimingSample: the calls timed are picked as their tasks are
// queued, over all the pool's listeners: the first, then one in TimingSample, however
// the workers run them.
func TestObserverTimesOneCallInTimingSample(t *testing.T) {
	for _, tc := range []struct {
		sample, n, timed int
	}{
		{8, 100, 13},  // 1, 9, ..., 97
		{8, 96, 12},   // an exact multiple
		{0, 130, 3},   // DefaultTimingSample: 1, 65, 129
		{1000, 10, 1}, // the first only
	} {
		obs := newRecordingObserver()
		p, _ := newPool(t, concurrent.Config{Threads: 4, Observer: obs, TimingSample: tc.sample})
		a, b := poolListener(t, p, feed.BaseOddsFeedListener{}), poolListener(t, p, feed.BaseOddsFeedListener{})
		ctx := testContext(t)
		for i := range tc.n {
			m := message(eventTypes[i%len(eventTypes)], match(i%9), 1, 0, i)
			c := []*concurrent.Dispatcher{a, b}[i%2]
			if i%3 == 0 {
				require.NoError(t, dispatchDecoded(ctx, c, m))
			} else {
				require.NoError(t, c.Dispatch(ctx, rawEvent(t, m)))
			}
		}
		require.NoError(t, a.Close(ctx))
		require.NoError(t, b.Close(ctx))
		_, timed, untimed, bad := obs.snapshot()
		assert.Equal(t, tc.timed, timed, "TimingSample %d, %d calls", tc.sample, tc.n)
		assert.Equal(t, tc.n-tc.timed, untimed)
		assert.Empty(t, bad)
	}
}

// TestObserverTimingSampleRefused: a negative Config.TimingSample is refused with the
// field named, with an observer or without.
func TestObserverTimingSampleRefused(t *testing.T) {
	tracker := concurrent.NewTaskLifecycleTracker()
	l := feed.BaseOddsFeedListener{}
	_, err := concurrent.NewPool(tracker, concurrent.Config{TimingSample: -1, Observer: newRecordingObserver()})
	assert.ErrorContains(t, err, "Config.TimingSample -1 must not be negative (0 means 64")
	_, err = concurrent.NewDispatcher(l, tracker, concurrent.Config{TimingSample: -2})
	assert.ErrorContains(t, err, "Config.TimingSample -2")
}
