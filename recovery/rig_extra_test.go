package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// Helpers for the scenario tests of the other files: a rig started at any time, a ledger
// that counts what the manager asks of it, and a recovery API that answers only when told.

// newRigAt is newRig on a fake clock started at start.
func newRigAt(t *testing.T, cfg recovery.Config, start time.Time, opts ...rigOption) *rig {
	t.Helper()
	return newRigOpenedAfter(t, cfg, start, 0, opts...)
}

// wiring is what a rig hands NewManager besides the config: by default the rig's fake
// API (unless recoveries are disabled) and one session.
type wiring struct {
	requester recovery.Requester
	node      feed.NodeID
	sessions  int
	clock     func(*clocktest.Fake) clock.Clock // the manager's clock made of the rig's
}

// A rigOption changes the wiring of a rig's manager.
type rigOption func(*wiring)

// withRequester wires the manager to req instead of the rig's fake API.
func withRequester(req recovery.Requester) rigOption {
	return func(w *wiring) { w.requester = req }
}

// withNode makes the manager record node with its requests.
func withNode(node feed.NodeID) rigOption {
	return func(w *wiring) { w.node = node }
}

// withClock gives the manager the clock wrap makes of the rig's fake clock.
func withClock(wrap func(*clocktest.Fake) clock.Clock) rigOption {
	return func(w *wiring) { w.clock = wrap }
}

// withSessions makes the manager take the system messages of n sessions.
func withSessions(n int) rigOption {
	return func(w *wiring) { w.sessions = n }
}

// newRigOpenedAfter is newRigAt with the manager opened openAfter after it was made, as a
// process does when loading its records takes time: the check ticker starts at Open.
func newRigOpenedAfter(t *testing.T, cfg recovery.Config, start time.Time, openAfter time.Duration, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{t: t, clk: clocktest.NewFake(start), api: &fakeAPI{calls: make(chan apiCall, 64)},
		global: feedtest.NewGlobalRecorder(), errs: make(chan error, 64)}
	if cfg.Producers == nil {
		cfg.Producers = []feed.Producer{lo, pre}
	}
	w := wiring{sessions: 1}
	if !cfg.Disabled {
		w.requester = r.api
	}
	for _, o := range opts {
		o(&w)
	}
	cfg.Clock = r.clk
	if w.clock != nil {
		cfg.Clock = w.clock(r.clk)
	}
	cfg.OnError = func(err error) { r.errs <- err }
	m, err := recovery.NewManager(w.requester, r.global, w.node, cfg)
	require.NoError(t, err)
	r.m = m
	for range w.sessions {
		r.handlers = append(r.handlers, m.SystemHandler())
	}
	r.clk.Advance(openAfter)
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	// Every test begins with the initial states, before anything else.
	disabled := make(map[int]bool)
	for _, id := range cfg.DisabledProducers {
		disabled[id] = true
	}
	for _, p := range cfg.Producers {
		if !disabled[p.ID] {
			require.Equal(t, fmt.Sprintf("producer %d down (InitialState)", p.ID), r.next())
		}
	}
	return r
}

// setClock moves the clock to at and lets the manager handle what fell due.
func (r *rig) setClock(at time.Time) {
	r.t.Helper()
	r.clk.Set(at)
	r.flush()
}

// requestErr returns err as a *recovery.RequestError, failing the test if it is not one.
func requestErr(t *testing.T, err error) *recovery.RequestError {
	t.Helper()
	var re *recovery.RequestError
	require.ErrorAs(t, err, &re)
	return re
}

// countingLedger wraps a Ledger, records every call, and can fail them.
type countingLedger struct {
	inner recovery.Ledger

	mu          sync.Mutex
	reserves    []recovery.LedgerRequest
	answers     []recovery.Reservation
	releases    []int64
	reserveErrs []error // scripted errors of the next Reserve calls (nil: ask inner)
	releaseErr  error   // the error of every Release
}

func newCountingLedger(inner recovery.Ledger) *countingLedger {
	return &countingLedger{inner: inner}
}

func (l *countingLedger) Reserve(ctx context.Context, r recovery.LedgerRequest) (recovery.Reservation, error) {
	l.mu.Lock()
	l.reserves = append(l.reserves, r)
	var err error
	if len(l.reserveErrs) > 0 {
		err, l.reserveErrs = l.reserveErrs[0], l.reserveErrs[1:]
	}
	l.mu.Unlock()
	if err != nil {
		return recovery.Reservation{}, err
	}
	res, err := l.inner.Reserve(ctx, r)
	l.mu.Lock()
	l.answers = append(l.answers, res)
	l.mu.Unlock()
	return res, err
}

func (l *countingLedger) Release(ctx context.Context, id int64) error {
	l.mu.Lock()
	l.releases = append(l.releases, id)
	err := l.releaseErr
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return l.inner.Release(ctx, id)
}

// calls returns the number of Reserve and Release calls so far.
func (l *countingLedger) calls() (reserves, releases int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reserves), len(l.releases)
}

// lastReserve returns the last LedgerRequest.
func (l *countingLedger) lastReserve() recovery.LedgerRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reserves[len(l.reserves)-1]
}

// fill reserves n places for account at the given times, failing the test if the limits
// refuse one.
func fill(t *testing.T, l recovery.Ledger, account string, length time.Duration, at ...time.Time) {
	t.Helper()
	for _, a := range at {
		res, err := l.Reserve(t.Context(), recovery.LedgerRequest{Account: account, Node: feed.Node(7), Producer: 1,
			At: a, Length: length, Limits: recovery.DefaultLimits()})
		require.NoError(t, err)
		require.True(t, res.Allowed, "pre-filling the ledger at %v", a)
	}
}

// spread returns n times from first, step apart.
func spread(first time.Time, step time.Duration, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = first.Add(time.Duration(i) * step)
	}
	return out
}

// blockingAPI is a recovery API that answers each call only when the test says so (or
// when the call's context ends).
type blockingAPI struct {
	calls   chan apiCall
	answers chan error
	ended   chan error // what each call returned
}

func newBlockingAPI() *blockingAPI {
	return &blockingAPI{calls: make(chan apiCall, 16), answers: make(chan error), ended: make(chan error, 16)}
}

func (a *blockingAPI) InitiateRecovery(ctx context.Context, p feed.Producer, after time.Time, id int64) error {
	a.calls <- apiCall{p.ID, after, id}
	var err error
	select {
	case err = <-a.answers:
	case <-ctx.Done():
		err = ctx.Err()
	}
	a.ended <- err
	return err
}

// next waits for the next call, which is then blocked until answer.
func (a *blockingAPI) next(t *testing.T) apiCall {
	t.Helper()
	select {
	case c := <-a.calls:
		return c
	case <-time.After(waitTimeout):
		t.Fatal("no recovery request")
		return apiCall{}
	}
}

// answer lets the blocked call return err.
func (a *blockingAPI) answer(t *testing.T, err error) {
	t.Helper()
	select {
	case a.answers <- err:
	case <-time.After(waitTimeout):
		t.Fatal("no recovery request waiting for an answer")
	}
}

func (a *blockingAPI) none(t *testing.T) {
	t.Helper()
	select {
	case c := <-a.calls:
		t.Fatalf("unexpected recovery request %+v", c)
	default:
	}
}

// errBoom is a failure of a fake dependency.
var errBoom = errors.New("boom")

// initiated is the line the rig's listener writes for the initiation of call.
func initiated(c apiCall) string {
	return feedtest.GlobalCall{Kind: feedtest.CallRecoveryInitiated,
		Recovery: feed.RecoveryInitiated{Producer: c.producer, RequestID: c.id, After: c.after}}.String()
}
