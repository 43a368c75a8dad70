package recovery_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// countingObserver records what a Manager tells its Observer.
type countingObserver struct {
	// m, once set, is read at each call: an observer called with the manager's lock held
	// would hang there, and the test with it. Only a test calls back into the manager.
	m atomic.Pointer[recovery.Manager]

	mu       sync.Mutex
	statuses []feed.ProducerStatus
	lags     map[int][]time.Duration
	requests map[requestKey]int
	ends     map[endKey][]time.Duration
}

type requestKey struct {
	producer int
	kind     feed.RecoveryKind
	result   recovery.RequestResult
}

type endKey struct {
	producer int
	kind     feed.RecoveryKind
	result   recovery.RecoveryResult
}

var _ recovery.Observer = (*countingObserver)(nil)

func newCountingObserver() *countingObserver {
	return &countingObserver{lags: make(map[int][]time.Duration), requests: make(map[requestKey]int),
		ends: make(map[endKey][]time.Duration)}
}

// noLockHeld reads the manager's state, which takes its lock.
func (o *countingObserver) noLockHeld() {
	if m := o.m.Load(); m != nil {
		m.Producers()
	}
}

func (o *countingObserver) ProducerStatusChanged(s feed.ProducerStatus) {
	o.noLockHeld()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.statuses = append(o.statuses, s)
}

func (o *countingObserver) ProducerAlive(producer int, lag time.Duration) {
	o.noLockHeld()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lags[producer] = append(o.lags[producer], lag)
}

func (o *countingObserver) RecoveryRequested(producer int, kind feed.RecoveryKind, result recovery.RequestResult) {
	o.noLockHeld()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[requestKey{producer, kind, result}]++
}

func (o *countingObserver) RecoveryEnded(producer int, kind feed.RecoveryKind, result recovery.RecoveryResult, took time.Duration) {
	o.noLockHeld()
	o.mu.Lock()
	defer o.mu.Unlock()
	k := endKey{producer, kind, result}
	o.ends[k] = append(o.ends[k], took)
}

// toCheck moves the clock to the rig's next check, in one step ending at it: the manager
// then acts on the check at exactly that time, not at a time the fake clock reached on
// the way to a later one.
func toCheck(r *rig) {
	r.t.Helper()
	r.advance(check-r.clk.Now().Sub(t0)%check, check)
}

// globalStatuses returns the statuses the listener was told, in order.
func globalStatuses(g *feedtest.GlobalRecorder) []feed.ProducerStatus {
	var out []feed.ProducerStatus
	for _, c := range g.Calls() {
		if c.Kind == feedtest.CallProducerStatus {
			out = append(out, c.Status)
		}
	}
	return out
}

// The observer is told exactly what Stats counts, through a scripted life: a request
// postponed by the rate limits, the first recovery completed, alives missing, a request
// the API fails, a recovery timed out and requested again, its completion, then event
// recoveries accepted, failed, completed and timed out. It is told the status changes the
// listener is told, in the same order, and each recovery's duration from its acceptance
// on the manager's clock.
func TestObserverIsToldWhatStatsCount(t *testing.T) {
	const timeout = time.Minute
	// The account made 20 short recoveries 9m30s ago: the short tier's 10-minute window
	// is full for 30 s more.
	ledger := recovery.NewMemoryLedger()
	fill(t, ledger, recovery.DefaultAccount, shortLen, spread(t0.Add(-9*time.Minute-30*time.Second), 0, 20)...)
	obs := newCountingObserver()
	r, api := newEventRig(t, recovery.Config{Ledger: ledger, RecoveryTimeout: timeout,
		RetryInitial: time.Second, RetryMax: 4 * time.Second, Observer: obs})
	obs.m.Store(r.m)

	// Rate limited; the alive runs 2 s late, and its copy from another session is not told.
	stamp := r.lagging(1, 2*time.Second, true)
	re := requestErr(t, r.nextErr())
	require.ErrorIs(t, re, recovery.ErrRateLimited)
	r.system(0, &feed.Alive{Header: feed.Header{Producer: 1, Timestamp: stamp}, Subscribed: true})
	require.Equal(t, uint64(1), r.m.Stats().DuplicateAlives)

	// Sent at the window's edge, accepted, completed 10 s later.
	r.advance(re.RetryAt.Sub(r.clk.Now()), check)
	first := r.recovered()
	accepted := r.clk.Now()
	r.advance(10*time.Second, check)
	r.alive(1, true)
	r.snapshot(0, 1, first.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	firstTook := r.clk.Now().Sub(accepted)
	require.Equal(t, 10*time.Second, firstTook)

	// Alives missing: down at the first check past the limit.
	r.advance(2*check, check)
	require.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next())

	// The API fails the next request; the retry is accepted.
	r.api.failNext(&feed.APIError{StatusCode: 500, Method: "POST", URL: "https://api.example.com/v1/liveodds/recovery/initiate_request"})
	r.alive(1, true)
	r.api.next(t)
	re = requestErr(t, r.nextErr())
	require.ErrorIs(t, re, feed.ErrServerError)
	r.advance(re.RetryAt.Sub(r.clk.Now()), check)
	second := r.recovered()
	accepted = r.clk.Now()

	// Its snapshot_complete does not come: timed out at the first check past the timeout,
	// requested again, and the new one completes 5 s after its acceptance.
	for r.m.Stats().RecoveryTimeouts == 0 {
		require.LessOrEqual(t, r.clk.Now().Sub(accepted), timeout+check, "no timeout found")
		toCheck(r)
	}
	timedOutTook := r.clk.Now().Sub(accepted)
	var te *recovery.TimeoutError
	require.ErrorAs(t, r.nextErr(), &te)
	require.Equal(t, second.id, te.RequestID)
	third := r.recovered()
	accepted = r.clk.Now()
	r.advance(5*time.Second, check)
	r.alive(1, true)
	r.snapshot(0, 1, third.id)
	require.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
	require.Equal(t, 5*time.Second, r.clk.Now().Sub(accepted))

	// Event recoveries: one failed by the API, one completed 3 s after its acceptance,
	// a stateful one timed out. Alives keep producer 1 up meanwhile.
	api.errs <- errBoom
	_, err := r.m.RecoverEvent(t.Context(), 1, match42)
	require.ErrorIs(t, err, errBoom)
	<-api.events
	id, err := r.m.RecoverEvent(t.Context(), 1, match42)
	require.NoError(t, err)
	<-api.events
	require.Equal(t, eventInitiated(id), r.next())
	accepted = r.clk.Now()
	r.advance(3*time.Second, check)
	r.alive(1, true)
	r.snapshot(0, 1, id)
	require.Equal(t, eventCompleted(id), r.next())
	require.Equal(t, 3*time.Second, r.clk.Now().Sub(accepted))
	stateful, err := r.m.RecoverEventStateful(t.Context(), 1, match42)
	require.NoError(t, err)
	<-api.events
	require.Equal(t, statefulInitiated(stateful), r.next())
	accepted = r.clk.Now()
	toCheck(r)
	for r.m.Stats().EventRecoveryTimeouts == 0 {
		require.LessOrEqual(t, r.clk.Now().Sub(accepted), timeout+check, "no timeout found")
		for range 2 {
			r.advance(check/3, check) // no check on the way
			r.alive(1, true)
		}
		toCheck(r)
	}
	statefulTook := r.clk.Now().Sub(accepted)
	require.ErrorAs(t, r.nextErr(), &te)
	require.Equal(t, stateful, te.RequestID)
	r.quiet()

	st := r.m.Stats()
	obs.mu.Lock()
	defer obs.mu.Unlock()

	// Status changes: the listener's, in order, and as many as Stats counts.
	assert.Equal(t, globalStatuses(r.global), obs.statuses)
	assert.Len(t, obs.statuses, 5)
	assert.Equal(t, st.StatusChanges, uint64(len(obs.statuses)))

	// Alives: each processed one, with its drift; no duplicate.
	assert.Equal(t, st.Alives, uint64(len(obs.lags[1])))
	assert.Len(t, obs.lags, 1, "only producer 1 sent alives")
	require.NotEmpty(t, obs.lags[1])
	assert.Equal(t, 2*time.Second, obs.lags[1][0])
	for i, lag := range obs.lags[1][1:] {
		assert.Zero(t, lag, "alive %d was stamped at receipt", i+1)
	}

	// Requests, by kind and result.
	assert.Equal(t, map[requestKey]int{
		{1, feed.ProducerRecovery, recovery.RequestRateLimited}:   1,
		{1, feed.ProducerRecovery, recovery.RequestFailed}:        1,
		{1, feed.ProducerRecovery, recovery.RequestAccepted}:      3,
		{1, feed.EventRecovery, recovery.RequestFailed}:           1,
		{1, feed.EventRecovery, recovery.RequestAccepted}:         1,
		{1, feed.EventStatefulRecovery, recovery.RequestAccepted}: 1,
	}, obs.requests)
	assert.Equal(t, st.RecoveriesRequested, uint64(obs.requests[requestKey{1, feed.ProducerRecovery, recovery.RequestAccepted}]))
	assert.Equal(t, st.EventRecoveriesRequested, uint64(obs.requests[requestKey{1, feed.EventRecovery, recovery.RequestAccepted}]+
		obs.requests[requestKey{1, feed.EventStatefulRecovery, recovery.RequestAccepted}]))
	assert.Equal(t, st.RequestsRateLimited, uint64(1))
	assert.Equal(t, st.RequestsFailed, uint64(2))

	// Ends, with their durations.
	assert.Greater(t, timedOutTook, timeout)
	assert.Greater(t, statefulTook, timeout)
	assert.Equal(t, map[endKey][]time.Duration{
		{1, feed.ProducerRecovery, recovery.RecoveryCompleted}:     {firstTook, 5 * time.Second},
		{1, feed.ProducerRecovery, recovery.RecoveryTimedOut}:      {timedOutTook},
		{1, feed.EventRecovery, recovery.RecoveryCompleted}:        {3 * time.Second},
		{1, feed.EventStatefulRecovery, recovery.RecoveryTimedOut}: {statefulTook},
	}, obs.ends)
	assert.Equal(t, st.RecoveriesCompleted, uint64(len(obs.ends[endKey{1, feed.ProducerRecovery, recovery.RecoveryCompleted}])))
	assert.Equal(t, st.RecoveryTimeouts, uint64(len(obs.ends[endKey{1, feed.ProducerRecovery, recovery.RecoveryTimedOut}])))
	assert.Equal(t, st.EventRecoveriesCompleted, uint64(len(obs.ends[endKey{1, feed.EventRecovery, recovery.RecoveryCompleted}])))
	assert.Equal(t, st.EventRecoveryTimeouts, uint64(len(obs.ends[endKey{1, feed.EventStatefulRecovery, recovery.RecoveryTimedOut}])))
}

// A recovery cut short by a lost connection does not end: it is requested again, and the
// new request's end is told, timed from its own acceptance. A snapshot_complete that
// comes before the API's answer ends the recovery at its acceptance. The status naming
// the session that lost its connection is the listener's.
func TestObserverRecoveryCutShortEndsOnce(t *testing.T) {
	api := newBlockingAPI()
	obs := newCountingObserver()
	r := newRig(t, recovery.Config{Observer: obs}, withRequester(api))
	obs.m.Store(r.m)
	r.alive(1, true)
	c1 := api.next(t)
	r.snapshot(0, 1, c1.id) // before the answer
	r.quiet()
	r.advance(4*time.Second, check)
	api.answer(t, nil)
	require.Equal(t, initiated(c1), r.next())
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())

	r.alive(3, true)
	c3 := api.next(t)
	api.answer(t, nil)
	require.Equal(t, initiated(c3), r.next())
	r.advance(5*time.Second, check)
	r.alive(1, true)
	r.m.HandleConnectionDown(feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}, nil)
	r.flush()
	require.Equal(t, "producer 1 down (ConnectionDown) on session 1 (live messages only)", r.next())
	r.quiet()

	r.advance(5*time.Second, check)
	r.alive(3, true)
	again := api.next(t)
	api.answer(t, nil)
	require.Equal(t, initiated(again), r.next())
	r.advance(2*time.Second, check)
	r.snapshot(0, 3, again.id)
	require.Equal(t, "producer 3 up (FirstRecoveryCompleted)", r.next())
	r.quiet()

	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, globalStatuses(r.global), obs.statuses)
	require.Len(t, obs.statuses, 5)
	require.NotNil(t, obs.statuses[3].Session)
	assert.Equal(t, feed.SessionRef{Index: 1, Interest: feed.LiveMessagesOnly}, *obs.statuses[3].Session)
	assert.Equal(t, map[requestKey]int{
		{1, feed.ProducerRecovery, recovery.RequestAccepted}: 1,
		{3, feed.ProducerRecovery, recovery.RequestAccepted}: 2,
	}, obs.requests)
	assert.Equal(t, map[endKey][]time.Duration{
		{1, feed.ProducerRecovery, recovery.RecoveryCompleted}: {0},
		{3, feed.ProducerRecovery, recovery.RecoveryCompleted}: {2 * time.Second},
	}, obs.ends)
	st := r.m.Stats()
	assert.Equal(t, uint64(3), st.RecoveriesRequested)
	assert.Equal(t, uint64(2), st.RecoveriesCompleted)
	assert.Equal(t, st.Alives, uint64(len(obs.lags[1])+len(obs.lags[3])))
}

// With recoveries disabled a needed recovery is skipped, which is no request: the
// observer is told the status changes only.
func TestObserverIsNotToldSkippedRecoveries(t *testing.T) {
	obs := newCountingObserver()
	r := newRigWithAPI(t, recovery.Config{Disabled: true, Observer: obs})
	r.alive(1, true)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
	require.Equal(t, uint64(1), r.m.Stats().RecoveriesSkipped)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, globalStatuses(r.global), obs.statuses)
	assert.Len(t, obs.statuses, 3)
	assert.Empty(t, obs.requests)
	assert.Empty(t, obs.ends)
	assert.Equal(t, map[int][]time.Duration{1: {0}}, obs.lags)
}

// A manager with no listener tells the observer all the same, from the initial states
// on, in the order of the producers' list.
func TestObserverWithoutAListener(t *testing.T) {
	clk := clocktest.NewFake(t0)
	obs := newCountingObserver()
	m, err := recovery.NewManager(nil, nil, feed.NodeID{}, recovery.Config{Clock: clk, Observer: obs,
		Producers: []feed.Producer{pre, lo}, Disabled: true})
	require.NoError(t, err)
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	obs.m.Store(m)
	clk.Advance(time.Second)
	body := feedtest.Marshal(&feed.Alive{Header: feed.Header{Producer: lo.ID, Timestamp: t0}, Subscribed: true})
	key := feed.RoutingKey{Type: feed.MessageAlive}
	m.HandleSystem(feed.Event{RawKey: key.String(), Key: key, Body: body, Producer: lo.ID})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, m.Flush(ctx))

	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, []feed.ProducerStatus{
		{Producer: pre.ID, Down: true, Reason: feed.InitialState, Timestamp: t0},
		{Producer: lo.ID, Down: true, Reason: feed.InitialState, Timestamp: t0},
		{Producer: lo.ID, Reason: feed.FirstRecoveryCompleted, Timestamp: t0.Add(time.Second)},
	}, obs.statuses)
	assert.Equal(t, map[int][]time.Duration{lo.ID: {time.Second}}, obs.lags)
	assert.Equal(t, uint64(3), m.Stats().StatusChanges)
}
