package recovery_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// The rig runs a Manager on a fake clock with a fake recovery API and records what it
// tells the listener (global) and OnError (errs), which a test waits for in turn.
type rig struct {
	t      *testing.T
	clk    *clocktest.Fake
	m      *recovery.Manager
	api    *fakeAPI
	global *feedtest.GlobalRecorder
	errs   chan error
	// handlers are the sessions' SystemHandlers, one per session of the rig.
	handlers []feed.SystemHandler
}

// lo and pre are the live and prematch producers of the rigs (limits 15 s and 5 min).
var (
	lo, _  = feed.LookupProducer(feed.DefaultProducers(), 1)
	pre, _ = feed.LookupProducer(feed.DefaultProducers(), 3)
)

func newRig(t *testing.T, cfg recovery.Config, opts ...rigOption) *rig {
	t.Helper()
	return newRigAt(t, cfg, t0, opts...)
}

// alive sends an alive of producer p stamped now, as a session would, and, for one with
// subscribed=1, tells the manager it is processed through it, as the SDK's tracker does
// when no message before the alive is pending.
func (r *rig) alive(p int, subscribed bool) {
	r.aliveQueued(p, subscribed)
	if subscribed {
		r.m.ProcessedThrough(p, r.clk.Now())
		r.flush()
	}
}

// aliveQueued sends an alive of producer p stamped now, with messages before it still
// being processed: the processed point does not move.
func (r *rig) aliveQueued(p int, subscribed bool) {
	r.system(0, &feed.Alive{Header: feed.Header{Producer: p, Timestamp: r.clk.Now()}, Subscribed: subscribed})
}

// snapshot sends the snapshot_complete of request id on session s.
func (r *rig) snapshot(s, p int, id int64) {
	r.system(s, &feed.SnapshotComplete{Header: feed.Header{Producer: p, Timestamp: r.clk.Now(), RequestID: id}})
}

func (r *rig) system(session int, m feed.Message) {
	body := feedtest.Marshal(m)
	key := feed.RoutingKey{Type: m.Type()}
	r.handlers[session].HandleSystem(feed.Event{RawKey: key.String(), Key: key, Body: body,
		Producer: m.MessageHeader().Producer, RequestID: m.MessageHeader().RequestID})
	r.flush()
}

// advance moves the clock in steps no longer than the check interval, so that no tick is
// lost, and lets the manager handle each.
func (r *rig) advance(d, step time.Duration) {
	for d > 0 {
		s := min(d, step)
		r.clk.Advance(s)
		r.flush()
		d -= s
	}
}

// waitTimeout is how long a test waits in real time for the manager to act on what it was
// given: a guard against a hang, never a delay the test relies on.
const waitTimeout = time.Minute

func (r *rig) flush() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(r.t, r.m.Flush(ctx))
}

// next returns the next call to the listener, described by feedtest.GlobalCall.String
// ("producer 1 up (FirstRecoveryCompleted)"), failing the test if none comes.
func (r *rig) next() string {
	r.t.Helper()
	return r.global.RequireNext(r.t).String()
}

// nextErr returns the next error reported.
func (r *rig) nextErr() error {
	r.t.Helper()
	select {
	case e := <-r.errs:
		return e
	case <-time.After(waitTimeout):
		r.t.Fatal("no error reported")
		return nil
	}
}

// quiet checks that nothing more was told.
func (r *rig) quiet() {
	r.t.Helper()
	r.flush()
	r.global.RequireNone(r.t)
	select {
	case err := <-r.errs:
		r.t.Fatalf("unexpected error %v", err)
	default:
	}
}

// recover answers the next API call and waits for its initiation; it returns the call.
func (r *rig) recovered() apiCall {
	r.t.Helper()
	c := r.api.next(r.t)
	require.Equal(r.t, initiated(c), r.next())
	return c
}

func (r *rig) state(p int) recovery.ProducerState {
	s, ok := r.m.Producer(p)
	require.True(r.t, ok)
	return s
}

// fakeAPI is the recovery API: it records each call and answers with the next scripted
// error (nil: accepted).
type fakeAPI struct {
	mu    sync.Mutex
	fail  []error
	calls chan apiCall
}

type apiCall struct {
	producer int
	after    time.Time
	id       int64
}

func (a *fakeAPI) InitiateRecovery(_ context.Context, p feed.Producer, after time.Time, id int64) error {
	a.mu.Lock()
	var err error
	if len(a.fail) > 0 {
		err, a.fail = a.fail[0], a.fail[1:]
	}
	a.mu.Unlock()
	a.calls <- apiCall{p.ID, after, id}
	return err
}

func (a *fakeAPI) failNext(errs ...error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail = append(a.fail, errs...)
}

func (a *fakeAPI) next(t *testing.T) apiCall {
	t.Helper()
	select {
	case c := <-a.calls:
		return c
	case <-time.After(waitTimeout):
		t.Fatal("no recovery request")
		return apiCall{}
	}
}

func (a *fakeAPI) none(t *testing.T) {
	t.Helper()
	select {
	case c := <-a.calls:
		t.Fatalf("unexpected recovery request %+v", c)
	default:
	}
}
