package concurrent

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/stretchr/testify/require"
)

// glTimeout bounds every wait of these tests for something that must happen: a guard
// against a hang, generous enough that a slow, busy machine never reaches it.
const glTimeout = time.Minute

// glDescs describes calls in the recorder's words (feedtest.GlobalCall.String).
func glDescs(calls []feedtest.GlobalCall) []string {
	var d []string
	for _, c := range calls {
		d = append(d, c.String())
	}
	return d
}

func glStatusDesc(s feed.ProducerStatus) string {
	return feedtest.GlobalCall{Kind: feedtest.CallProducerStatus, Status: s}.String()
}

func glRecoveryDesc(ri feed.RecoveryInitiated) string {
	return feedtest.GlobalCall{Kind: feedtest.CallRecoveryInitiated, Recovery: ri}.String()
}

// glFind returns the recorded call described by desc.
func glFind(t *testing.T, rec *feedtest.GlobalRecorder, desc string) feedtest.GlobalCall {
	t.Helper()
	calls := rec.Calls()
	for _, c := range calls {
		if c.String() == desc {
			return c
		}
	}
	t.Fatalf("no call %q among %q", desc, glDescs(calls))
	return feedtest.GlobalCall{}
}

// glNew returns a listener forwarding to rec over tr, closed at the end of the test.
func glNew(t *testing.T, rec *feedtest.GlobalRecorder, tr *TaskLifecycleTracker, cfg GateConfig) *StatusGate {
	t.Helper()
	g, err := NewStatusGate(rec, tr, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), glTimeout)
		defer cancel()
		_ = g.Close(ctx)
	})
	return g
}

// glSetup returns a recorder, a tracker and a listener over them.
func glSetup(t *testing.T) (*feedtest.GlobalRecorder, *TaskLifecycleTracker, *StatusGate) {
	t.Helper()
	rec := feedtest.NewGlobalRecorder()
	tr := NewTaskLifecycleTracker()
	return rec, tr, glNew(t, rec, tr, GateConfig{})
}

func glUp(producer int) feed.ProducerStatus {
	return feed.ProducerStatus{Producer: producer, Reason: feed.FirstRecoveryCompleted}
}

func glDown(producer int) feed.ProducerStatus {
	return feed.ProducerStatus{Producer: producer, Down: true, Reason: feed.AliveIntervalViolation}
}

func glRecovery(producer int, requestID int64) feed.RecoveryInitiated {
	return feed.RecoveryInitiated{Producer: producer, RequestID: requestID}
}

// glAllocate allocates n started tasks of rc.
func glAllocate(tr *TaskLifecycleTracker, rc RecoveryContext, n int) []Ticket {
	ks := make([]Ticket, n)
	for i := range ks {
		ks[i] = tr.Allocate(rc)
		ks[i].Start()
	}
	return ks
}

// glCompleteAll completes ks from several goroutines and returns once all are complete.
func glCompleteAll(ks []Ticket, goroutines int) {
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := g; i < len(ks); i += goroutines {
				ks[i].Complete()
			}
		})
	}
	wg.Wait()
}

// glSentinel posts a pass-through call and waits until the customer has it: every call
// decided before it has been delivered by then.
func glSentinel(t *testing.T, g *StatusGate, rec *feedtest.GlobalRecorder) []string {
	t.Helper()
	ups := func(calls []string) int {
		n := 0
		for _, c := range calls {
			if c == "connection up on session 0 (all messages)" {
				n++
			}
		}
		return n
	}
	before := ups(glDescs(rec.Calls()))
	g.OnConnectionUp(context.Background(), feed.SessionRef{})
	calls := glDescs(rec.Calls())
	for ups(calls) == before {
		calls = glDescs(rec.RequireCalls(t, len(calls)+1))
	}
	return calls
}

func TestGlobalNewRefusesNil(t *testing.T) {
	g, err := NewStatusGate(nil, NewTaskLifecycleTracker(), GateConfig{})
	require.Error(t, err)
	require.Nil(t, g)
	require.Contains(t, err.Error(), "listener")

	g, err = NewStatusGate(feedtest.NewGlobalRecorder(), nil, GateConfig{})
	require.Error(t, err)
	require.Nil(t, g)
	require.Contains(t, err.Error(), "tracker")
}

func TestGlobalPassThroughInOrder(t *testing.T) {
	rec, _, g := glSetup(t)
	ctx := context.Background()
	g.OnConnectionDown(ctx, feed.SessionRef{}, errors.New("broker gone"))
	g.OnConnectionUp(ctx, feed.SessionRef{})
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	g.OnProducerStatusChange(ctx, glDown(1))
	g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 2, Delayed: true, Reason: feed.ProcessingQueueDelayViolation})
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 3, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}, RequestID: 9})
	g.OnProducerStatusChange(ctx, glUp(4)) // no recovery known: at once

	want := []string{
		"connection down on session 0 (all messages): broker gone",
		"connection up on session 0 (all messages)",
		"recovery #7 of producer 1 initiated",
		"producer 1 down (AliveIntervalViolation)",
		"producer 2 up, delayed (ProcessingQueueDelayViolation)",
		"event recovery #9 of producer 3 completed for sr:match:1",
		"producer 4 up (FirstRecoveryCompleted)",
	}
	require.Equal(t, want, glDescs(rec.RequireCalls(t, len(want))))
	st := g.Stats()
	require.Equal(t, GateStats{Forwarded: uint64(len(want))}, st)
}

func TestGlobalDefersUpUntilLastTask(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	rc := RecoveryContext{Producer: 1, RequestID: 7}

	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	ks := glAllocate(tr, rc, 100)
	glCompleteAll(ks[:99], 4)
	require.Equal(t, 1, tr.Pending(rc))

	up := glUp(1)
	g.OnProducerStatusChange(ctx, up)
	st := g.Stats()
	require.Equal(t, 1, st.Held)
	require.Equal(t, uint64(1), st.Deferred)
	require.Zero(t, st.Released)

	// Not yet: a call decided after the up reaches the customer, the up does not.
	require.Equal(t, []string{"recovery #7 of producer 1 initiated", "connection up on session 0 (all messages)"}, glSentinel(t, g, rec))
	require.Equal(t, 1, g.Stats().Held)

	// The last task: the up follows it.
	beforeLast := rec.Stamp()
	ks[99].Complete()
	st = g.Stats()
	require.Zero(t, st.Held, "released by the last Complete, before it returned")
	require.Equal(t, uint64(1), st.Released)
	calls := rec.RequireCalls(t, 3)
	require.Len(t, calls, 3)
	require.Equal(t, glStatusDesc(up), calls[2].String())
	require.Greater(t, calls[2].Seq, beforeLast, "the up reached the customer after the last task completed")

	st = g.Stats()
	require.Equal(t, GateStats{Forwarded: 3, Deferred: 1, Released: 1}, st)
}

func TestGlobalUpReasonsDeferredOthersNot(t *testing.T) {
	reasons := []feed.StatusReason{
		feed.FirstRecoveryCompleted,
		feed.ProcessingQueueDelayStabilized,
		feed.ReturnedFromInactivity,
		feed.AliveIntervalViolation,
		feed.ProcessingQueueDelayViolation,
		feed.ConnectionDown,
		feed.Other,
	}
	for _, reason := range reasons {
		t.Run(reason.String(), func(t *testing.T) {
			rec, tr, g := glSetup(t)
			ctx := context.Background()
			g.OnRecoveryInitiated(ctx, glRecovery(2, 20))
			k := tr.Allocate(RecoveryContext{Producer: 2, RequestID: 20})
			s := feed.ProducerStatus{Producer: 2, Reason: reason, Down: !reason.IsUp()}
			g.OnProducerStatusChange(ctx, s)

			if !reason.IsUp() {
				require.Zero(t, g.Stats().Held)
				require.Equal(t, []string{"recovery #20 of producer 2 initiated", glStatusDesc(s)}, glDescs(rec.RequireCalls(t, 2)))
				k.Complete()
				require.Zero(t, g.Stats().Deferred)
				return
			}
			require.Equal(t, 1, g.Stats().Held)
			require.Equal(t, []string{"recovery #20 of producer 2 initiated", "connection up on session 0 (all messages)"}, glSentinel(t, g, rec))
			k.Complete()
			require.Equal(t, []string{"recovery #20 of producer 2 initiated", "connection up on session 0 (all messages)", glStatusDesc(s)}, glDescs(rec.RequireCalls(t, 3)))
			require.Equal(t, uint64(1), g.Stats().Released)
		})
	}
}

func TestGlobalUpForwardedAtOnce(t *testing.T) {
	t.Run("no recovery initiated", func(t *testing.T) {
		rec, tr, g := glSetup(t)
		// Tasks pending, even of the producer's live context and of some request: without
		// a recovery recorded for the producer, none holds its up.
		tr.Allocate(RecoveryContext{Producer: 1})
		tr.Allocate(RecoveryContext{Producer: 1, RequestID: 7})
		g.OnRecoveryInitiated(context.Background(), glRecovery(2, 7)) // another producer
		g.OnProducerStatusChange(context.Background(), glUp(1))
		require.Equal(t, []string{"recovery #7 of producer 2 initiated", "producer 1 up (FirstRecoveryCompleted)"}, glDescs(rec.RequireCalls(t, 2)))
		st := g.Stats()
		require.Zero(t, st.Held)
		require.Zero(t, st.Deferred)
	})
	t.Run("no task pending", func(t *testing.T) {
		rec, tr, g := glSetup(t)
		g.OnRecoveryInitiated(context.Background(), glRecovery(1, 7))
		g.OnProducerStatusChange(context.Background(), glUp(1)) // no task ever
		glCompleteAll(glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 7}, 10), 3)
		tr.Allocate(RecoveryContext{Producer: 1}) // a live task pending does not count
		g.OnProducerStatusChange(context.Background(), feed.ProducerStatus{Producer: 1, Reason: feed.ReturnedFromInactivity})
		require.Equal(t, []string{
			"recovery #7 of producer 1 initiated",
			"producer 1 up (FirstRecoveryCompleted)",
			"producer 1 up (ReturnedFromInactivity)",
		}, glDescs(rec.RequireCalls(t, 3)))
		st := g.Stats()
		require.Zero(t, st.Held)
		require.Zero(t, st.Deferred)
	})
}

func TestGlobalDownCancelsHeldUp(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	ks := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 7}, 2)
	g.OnProducerStatusChange(ctx, glUp(1))
	require.Equal(t, 1, g.Stats().Held)

	down := glDown(1)
	g.OnProducerStatusChange(ctx, down)
	st := g.Stats()
	require.Zero(t, st.Held)
	require.Equal(t, uint64(1), st.Cancelled)
	require.Equal(t, []string{"recovery #7 of producer 1 initiated", glStatusDesc(down)}, glDescs(rec.RequireCalls(t, 2)))

	glCompleteAll(ks, 2)
	require.Equal(t, []string{"recovery #7 of producer 1 initiated", glStatusDesc(down), "connection up on session 0 (all messages)"}, glSentinel(t, g, rec))
	st = g.Stats()
	require.Zero(t, st.Released)
	require.Equal(t, uint64(1), st.Cancelled)
	require.Equal(t, uint64(1), st.Deferred)

	// A down for another producer leaves a held up alone.
	g.OnRecoveryInitiated(ctx, glRecovery(1, 8))
	k := tr.Allocate(RecoveryContext{Producer: 1, RequestID: 8})
	g.OnProducerStatusChange(ctx, glUp(1))
	g.OnProducerStatusChange(ctx, glDown(2))
	require.Equal(t, 1, g.Stats().Held)
	k.Complete()
	calls := glDescs(rec.RequireCalls(t, 6))
	require.Equal(t, []string{"recovery #8 of producer 1 initiated", "producer 2 down (AliveIntervalViolation)", "producer 1 up (FirstRecoveryCompleted)"}, calls[3:])
	require.Equal(t, uint64(1), g.Stats().Cancelled)
}

func TestGlobalNewerRecoverySupersedes(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	old := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 7}, 3)
	g.OnProducerStatusChange(ctx, glUp(1))
	require.Equal(t, 1, g.Stats().Held)

	// The same recovery again changes nothing.
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	require.Equal(t, 1, g.Stats().Held)
	require.Zero(t, g.Stats().Superseded)

	g.OnRecoveryInitiated(ctx, glRecovery(1, 8))
	st := g.Stats()
	require.Zero(t, st.Held, "the older recovery's up is dropped")
	require.Equal(t, uint64(1), st.Superseded)

	// A later up waits for the newer context's tasks, not the older one's.
	newer := tr.Allocate(RecoveryContext{Producer: 1, RequestID: 8})
	up2 := feed.ProducerStatus{Producer: 1, Reason: feed.ReturnedFromInactivity}
	g.OnProducerStatusChange(ctx, up2)
	require.Equal(t, 1, g.Stats().Held)
	newer.Complete()
	require.Zero(t, g.Stats().Held)
	want := []string{"recovery #7 of producer 1 initiated", "recovery #7 of producer 1 initiated", "recovery #8 of producer 1 initiated", glStatusDesc(up2)}
	require.Equal(t, want, glDescs(rec.RequireCalls(t, 4)))
	require.Equal(t, 3, tr.Pending(RecoveryContext{Producer: 1, RequestID: 7}), "released with the old tasks still pending")

	// The old tasks completing later release nothing.
	glCompleteAll(old, 3)
	require.Equal(t, append(want, "connection up on session 0 (all messages)"), glSentinel(t, g, rec))

	// A newer recovery without tasks: its up goes at once, though the older one's tasks are pending.
	more := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 8}, 2)
	g.OnRecoveryInitiated(ctx, glRecovery(1, 9))
	g.OnProducerStatusChange(ctx, glUp(1))
	require.Zero(t, g.Stats().Held)
	calls := glDescs(rec.RequireCalls(t, 7))
	require.Equal(t, []string{"recovery #9 of producer 1 initiated", "producer 1 up (FirstRecoveryCompleted)"}, calls[5:])
	glCompleteAll(more, 1)

	st = g.Stats()
	require.Equal(t, uint64(1), st.Superseded)
	require.Equal(t, uint64(1), st.Released)
	require.Equal(t, uint64(2), st.Deferred)
}

func TestGlobalEventRecoveryDoesNotSupersede(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	match := feed.URN{Prefix: "sr", Type: "match", ID: 42}
	rc := RecoveryContext{Producer: 1, RequestID: 7}
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	k := tr.Allocate(rc)
	g.OnProducerStatusChange(ctx, glUp(1))

	perEvent := feed.RecoveryInitiated{Producer: 1, RequestID: 9, Event: match}
	g.OnRecoveryInitiated(ctx, perEvent)
	st := g.Stats()
	require.Equal(t, 1, st.Held, "a per-event recovery leaves the held up alone")
	require.Zero(t, st.Superseded)

	// Nor does it become the producer's context: a second up joins the first, on rc.
	tr.Allocate(RecoveryContext{Producer: 1, RequestID: 9}) // never completes
	up2 := feed.ProducerStatus{Producer: 1, Reason: feed.ProcessingQueueDelayStabilized}
	g.OnProducerStatusChange(ctx, up2)
	require.Equal(t, 2, g.Stats().Held)

	k.Complete()
	require.Equal(t, []string{
		"recovery #7 of producer 1 initiated",
		glRecoveryDesc(perEvent),
		"producer 1 up (FirstRecoveryCompleted)",
		glStatusDesc(up2),
	}, glDescs(rec.RequireCalls(t, 4)))

	// And a later up, with the per-event request's task still pending, is not held.
	g.OnProducerStatusChange(ctx, glUp(1))
	require.Zero(t, g.Stats().Held)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", glDescs(rec.RequireCalls(t, 5))[4])
}

func TestGlobalUpsHeldTogetherReleasedInOrder(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	g.OnRecoveryInitiated(ctx, glRecovery(3, 30))
	ks := glAllocate(tr, RecoveryContext{Producer: 3, RequestID: 30}, 5)
	ups := []feed.ProducerStatus{
		{Producer: 3, Reason: feed.FirstRecoveryCompleted},
		{Producer: 3, Reason: feed.ProcessingQueueDelayStabilized},
		{Producer: 3, Reason: feed.ReturnedFromInactivity},
	}
	for _, s := range ups {
		g.OnProducerStatusChange(ctx, s)
	}
	st := g.Stats()
	require.Equal(t, 3, st.Held)
	require.Equal(t, uint64(3), st.Deferred)
	require.Equal(t, []string{"recovery #30 of producer 3 initiated", "connection up on session 0 (all messages)"}, glSentinel(t, g, rec))

	glCompleteAll(ks, 3)
	want := []string{"recovery #30 of producer 3 initiated", "connection up on session 0 (all messages)"}
	for _, s := range ups {
		want = append(want, glStatusDesc(s))
	}
	require.Equal(t, want, glDescs(rec.RequireCalls(t, len(want))))
	st = g.Stats()
	require.Zero(t, st.Held)
	require.Equal(t, uint64(3), st.Released)
}

func TestGlobalEventRecoveryCompletedHeld(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	match := feed.URN{Prefix: "sr", Type: "match", ID: 5}
	erc := feed.EventRecoveryCompleted{Producer: 1, Event: match, RequestID: 55}
	ercDesc := "event recovery #55 of producer 1 completed for sr:match:5"
	ks := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 55}, 4)
	glCompleteAll(ks[:3], 3)

	g.OnEventRecoveryCompleted(ctx, erc)
	st := g.Stats()
	require.Equal(t, 1, st.Held)
	require.Equal(t, uint64(1), st.Deferred)

	// A down status does not cancel it.
	down := glDown(1)
	g.OnProducerStatusChange(ctx, down)
	st = g.Stats()
	require.Equal(t, 1, st.Held)
	require.Zero(t, st.Cancelled)
	require.Equal(t, []string{glStatusDesc(down), "connection up on session 0 (all messages)"}, glSentinel(t, g, rec))

	beforeLast := rec.Stamp()
	ks[3].Complete()
	calls := rec.RequireCalls(t, 3)
	require.Equal(t, ercDesc, calls[2].String())
	require.Greater(t, calls[2].Seq, beforeLast)
	st = g.Stats()
	require.Zero(t, st.Held)
	require.Equal(t, uint64(1), st.Released)

	// None pending: at once.
	other := feed.EventRecoveryCompleted{Producer: 2, Event: match, RequestID: 56}
	tr.Allocate(RecoveryContext{Producer: 2, RequestID: 57}) // another request's task
	g.OnEventRecoveryCompleted(ctx, other)
	require.Zero(t, g.Stats().Held)
	require.Equal(t, "event recovery #56 of producer 2 completed for sr:match:5", glDescs(rec.RequireCalls(t, 4))[3])
	require.Equal(t, uint64(1), g.Stats().Deferred)
}

func TestGlobalManyProducersIndependent(t *testing.T) {
	rec, tr, g := glSetup(t)
	ctx := context.Background()
	const producers = 5
	tickets := make(map[int][]Ticket)
	for p := 1; p <= producers; p++ {
		rid := int64(100 + p)
		g.OnRecoveryInitiated(ctx, glRecovery(p, rid))
		tickets[p] = glAllocate(tr, RecoveryContext{Producer: p, RequestID: rid}, 20*p)
		g.OnProducerStatusChange(ctx, glUp(p))
	}
	require.Equal(t, producers, g.Stats().Held)
	rec.RequireCalls(t, producers)

	// Producer 3 alone finishes: its up goes, the others stay held.
	glCompleteAll(tickets[3], 4)
	require.Equal(t, producers-1, g.Stats().Held)
	require.Equal(t, "producer 3 up (FirstRecoveryCompleted)", glDescs(rec.RequireCalls(t, producers+1))[producers])

	// The others finish in a random interleaving over several goroutines. Each completion
	// is stamped just before Complete; a producer's up must come after its last stamp.
	type stamped struct {
		p int
		k Ticket
	}
	var rest []stamped
	for p := 1; p <= producers; p++ {
		if p != 3 {
			for _, k := range tickets[p] {
				rest = append(rest, stamped{p, k})
			}
		}
	}
	rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	var lastStamp [producers + 1]atomic.Int64
	const goroutines = 4
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Go(func() {
			for i := w; i < len(rest); i += goroutines {
				s := rec.Stamp()
				for {
					old := lastStamp[rest[i].p].Load()
					if s <= old || lastStamp[rest[i].p].CompareAndSwap(old, s) {
						break
					}
				}
				rest[i].k.Complete()
			}
		})
	}
	wg.Wait()

	calls := rec.RequireCalls(t, 2*producers)
	require.Len(t, calls, 2*producers)
	for p := 1; p <= producers; p++ {
		if p == 3 {
			continue
		}
		up := glFind(t, rec, glStatusDesc(glUp(p)))
		require.Greater(t, up.Seq, lastStamp[p].Load(), "producer %d: up before its last task", p)
	}
	st := g.Stats()
	require.Zero(t, st.Held)
	require.Equal(t, uint64(producers), st.Released)
	require.Equal(t, uint64(producers), st.Deferred)
}

func TestGlobalPanickingListenerReported(t *testing.T) {
	rec := feedtest.NewGlobalRecorder()
	var panicked atomic.Bool
	rec.Hook = func(_ context.Context, c feedtest.GlobalCall) string {
		if c.Kind == feedtest.CallConnectionUp && panicked.CompareAndSwap(false, true) {
			panic("customer bug")
		}
		return ""
	}
	errs := make(chan error, 4)
	g := glNew(t, rec, NewTaskLifecycleTracker(), GateConfig{OnError: func(err error) { errs <- err }})

	ctx := context.Background()
	g.OnConnectionUp(ctx, feed.SessionRef{}) // panics
	g.OnConnectionDown(ctx, feed.SessionRef{}, errors.New("x"))
	g.OnConnectionUp(ctx, feed.SessionRef{})

	err := glRecvErr(t, errs)
	var le *feed.ListenerError
	require.ErrorAs(t, err, &le)
	require.Equal(t, "customer bug", le.Panic)
	require.NotEmpty(t, le.Stack)
	require.Equal(t, "StatusGate.OnConnectionUp", le.Method)
	require.ErrorIs(t, err, feed.ErrListenerPanic)

	require.Equal(t, []string{"connection down on session 0 (all messages): x", "connection up on session 0 (all messages)"}, glDescs(rec.RequireCalls(t, 2)))
	select {
	case err := <-errs:
		t.Fatalf("a second error reported: %v", err)
	default:
	}
}

func glRecvErr(t *testing.T, errs <-chan error) error {
	t.Helper()
	select {
	case err := <-errs:
		return err
	case <-time.After(glTimeout):
		t.Fatal("timed out waiting for OnError")
		return nil
	}
}

func TestGlobalCloseDropsHeldDeliversForwarded(t *testing.T) {
	rec := feedtest.NewGlobalRecorder()
	release := make(chan struct{})
	entered := make(chan struct{})
	var first atomic.Bool
	rec.Hook = func(context.Context, feedtest.GlobalCall) string {
		if first.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		return ""
	}
	tr := NewTaskLifecycleTracker()
	g, err := NewStatusGate(rec, tr, GateConfig{})
	require.NoError(t, err)
	ctx := context.Background()

	g.OnRecoveryInitiated(ctx, glRecovery(1, 7)) // blocks the customer
	<-entered
	ks := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 7}, 2)
	g.OnProducerStatusChange(ctx, glUp(1)) // held
	ek := tr.Allocate(RecoveryContext{Producer: 2, RequestID: 3})
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 2, RequestID: 3}) // held
	g.OnConnectionDown(ctx, feed.SessionRef{}, errors.New("a"))
	g.OnConnectionUp(ctx, feed.SessionRef{})
	require.Equal(t, 2, g.Stats().Held)

	closed := make(chan error, 1)
	go func() {
		cctx, cancel := context.WithTimeout(context.Background(), glTimeout)
		defer cancel()
		closed <- g.Close(cctx)
	}()
	close(release)
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(glTimeout):
		t.Fatal("Close did not return")
	}
	// Everything forwarded before Close was delivered before it returned.
	require.Equal(t, []string{"recovery #7 of producer 1 initiated", "connection down on session 0 (all messages): a", "connection up on session 0 (all messages)"}, glDescs(rec.Calls()))
	st := g.Stats()
	require.Zero(t, st.Held)
	require.Equal(t, uint64(2), st.Dropped)

	// Calls after Close are dropped, and the tasks completing release nothing.
	g.OnConnectionUp(ctx, feed.SessionRef{})
	g.OnConnectionDown(ctx, feed.SessionRef{}, errors.New("b"))
	g.OnProducerStatusChange(ctx, glDown(1))
	g.OnProducerStatusChange(ctx, glUp(5)) // no recovery: would go at once
	glCompleteAll(ks, 2)
	ek.Complete()
	st = g.Stats()
	require.Equal(t, uint64(6), st.Dropped)
	require.Zero(t, st.Released)
	require.Equal(t, uint64(3), st.Forwarded)
	require.Len(t, rec.Calls(), 3, "nothing reaches the customer after Close")

	// An up or an event recovery after Close, with tasks of its context pending, never
	// reaches the customer either, and is not left held once the tasks are done.
	g.OnRecoveryInitiated(ctx, glRecovery(1, 8))
	late := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 8}, 2)
	g.OnProducerStatusChange(ctx, glUp(1))
	g.OnEventRecoveryCompleted(ctx, feed.EventRecoveryCompleted{Producer: 1, RequestID: 8})
	require.Zero(t, g.Stats().Held, "after Close nothing is held")
	glCompleteAll(late, 2)
	st = g.Stats()
	require.Zero(t, st.Held)
	require.Zero(t, st.Released)
	require.Equal(t, uint64(9), st.Dropped, "the recovery, the up and the event recovery")
	require.Len(t, rec.Calls(), 3, "nothing reaches the customer after Close")

	// Closing again is harmless.
	require.NoError(t, g.Close(context.Background()))
}

func TestGlobalCloseGivesUpOnBlockedCall(t *testing.T) {
	rec := feedtest.NewGlobalRecorder()
	release := make(chan struct{})
	entered := make(chan context.Context, 1)
	rec.Hook = func(ctx context.Context, c feedtest.GlobalCall) string {
		if c.Kind == feedtest.CallConnectionUp {
			entered <- ctx
			<-release // ignores ctx: a customer that never gives up
		}
		return ""
	}
	g, err := NewStatusGate(rec, NewTaskLifecycleTracker(), GateConfig{})
	require.NoError(t, err)
	defer close(release)

	g.OnConnectionUp(context.Background(), feed.SessionRef{})
	callCtx := func() context.Context {
		select {
		case c := <-entered:
			return c
		case <-time.After(glTimeout):
			t.Fatal("the customer was not called")
			return nil
		}
	}()
	g.OnConnectionDown(context.Background(), feed.SessionRef{}, errors.New("queued behind the blocked call"))
	require.NoError(t, callCtx.Err())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	closed := make(chan error, 1)
	go func() { closed <- g.Close(ctx) }()
	select {
	case err := <-closed:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(glTimeout):
		t.Fatal("Close with an ended context did not return")
	}
	require.ErrorIs(t, callCtx.Err(), context.Canceled, "the blocked call's context is cancelled")

	// Once the call returns, the queued one is dropped, not delivered.
	release <- struct{}{}
	select {
	case <-g.box.done:
	case <-time.After(glTimeout):
		t.Fatal("the mailbox did not stop")
	}
	require.Equal(t, []string{"connection up on session 0 (all messages)"}, glDescs(rec.Calls()))
	require.Equal(t, uint64(1), g.Stats().Dropped, "the call Close gave up on counts as dropped")
}
