package concurrent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// limitRig is a gate with a HoldLimit on a fake clock, whose OnHoldLimit calls arrive on
// a channel.
type limitRig struct {
	rec    *feedtest.GlobalRecorder
	tr     *TaskLifecycleTracker
	g      *StatusGate
	clk    *clocktest.Fake
	limits chan RecoveryContext
}

const testHoldLimit = time.Minute

func newLimitRig(t *testing.T) *limitRig {
	r := &limitRig{rec: feedtest.NewGlobalRecorder(), tr: NewTaskLifecycleTracker(),
		clk: clocktest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), limits: make(chan RecoveryContext, 8)}
	r.g = glNew(t, r.rec, r.tr, GateConfig{HoldLimit: testHoldLimit, Clock: r.clk,
		OnHoldLimit: func(rc RecoveryContext) { r.limits <- rc }})
	return r
}

func (r *limitRig) nextLimit(t *testing.T) RecoveryContext {
	t.Helper()
	select {
	case rc := <-r.limits:
		return rc
	case <-time.After(glTimeout):
		t.Fatal("OnHoldLimit was not called")
		return RecoveryContext{}
	}
}

// noLimit checks that OnHoldLimit has not been called. The tests call it where no timer
// is due (the fake clock short of the bound, or the timer stopped, which they check).
func (r *limitRig) noLimit(t *testing.T) {
	t.Helper()
	select {
	case rc := <-r.limits:
		t.Fatalf("OnHoldLimit called for %v", rc)
	default:
	}
}

// An up held back for HoldLimit is reported to OnHoldLimit, once, and stays held; its
// tasks done, it is released as ever.
func TestGateHoldLimitReportsAnUpHeldTooLong(t *testing.T) {
	r := newLimitRig(t)
	ctx := context.Background()
	rc := RecoveryContext{Producer: 1, RequestID: 7}
	r.g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	ks := glAllocate(r.tr, rc, 3)
	up := glUp(1)
	r.g.OnProducerStatusChange(ctx, up)
	require.Equal(t, 1, r.g.Stats().Held)

	r.clk.Advance(testHoldLimit / 2)
	r.g.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Reason: feed.ProcessingQueueDelayStabilized}) // joins the held one
	r.clk.Advance(testHoldLimit/2 - time.Nanosecond)
	r.noLimit(t)
	assert.Zero(t, r.g.Stats().PastLimit, "the bound runs from the first up held")

	r.clk.Advance(time.Nanosecond)
	assert.Equal(t, rc, r.nextLimit(t))
	st := r.g.Stats()
	assert.Equal(t, uint64(1), st.PastLimit)
	assert.Equal(t, 2, st.Held, "the ups stay held: what to do is OnHoldLimit's")
	r.clk.Advance(10 * testHoldLimit)
	r.noLimit(t)
	assert.Zero(t, r.clk.Pending(), "told once: no timer left")

	glCompleteAll(ks, 2)
	calls := glDescs(r.rec.RequireCalls(t, 3))
	assert.Equal(t, []string{"recovery #7 of producer 1 initiated", "producer 1 up (FirstRecoveryCompleted)",
		"producer 1 up (ProcessingQueueDelayStabilized)"}, calls)
	st = r.g.Stats()
	assert.Equal(t, GateStats{Forwarded: 3, Deferred: 2, Released: 2, PastLimit: 1}, st)
}

// An up released, cancelled by a down, superseded by a newer recovery or dropped by Close
// before the bound stops its timer: OnHoldLimit is never told.
func TestGateHoldLimitStopsWithTheHeldUp(t *testing.T) {
	ctx := context.Background()
	for name, end := range map[string]func(r *limitRig, ks []Ticket){
		"released":   func(_ *limitRig, ks []Ticket) { glCompleteAll(ks, 1) },
		"cancelled":  func(r *limitRig, _ []Ticket) { r.g.OnProducerStatusChange(ctx, glDown(1)) },
		"superseded": func(r *limitRig, _ []Ticket) { r.g.OnRecoveryInitiated(ctx, glRecovery(1, 8)) },
		"closed":     func(r *limitRig, _ []Ticket) { require.NoError(t, r.g.Close(ctx)) },
	} {
		t.Run(name, func(t *testing.T) {
			r := newLimitRig(t)
			r.g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
			ks := glAllocate(r.tr, RecoveryContext{Producer: 1, RequestID: 7}, 2)
			r.g.OnProducerStatusChange(ctx, glUp(1))
			require.Equal(t, 1, r.clk.Pending())
			end(r, ks)
			assert.Zero(t, r.clk.Pending(), "the timer is stopped")
			r.clk.Advance(2 * testHoldLimit)
			r.noLimit(t)
			assert.Zero(t, r.g.Stats().PastLimit)
		})
	}
}

// A timer that fires as the up is released finds it gone and tells nothing.
func TestGateHoldLimitRacingTheRelease(t *testing.T) {
	ctx := context.Background()
	for range 50 {
		r := newLimitRig(t)
		r.g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
		ks := glAllocate(r.tr, RecoveryContext{Producer: 1, RequestID: 7}, 1)
		r.g.OnProducerStatusChange(ctx, glUp(1))
		done := make(chan struct{})
		go func() { defer close(done); ks[0].Complete() }()
		r.clk.Advance(testHoldLimit)
		<-done
		r.rec.RequireCalls(t, 2)
		st := r.g.Stats()
		assert.Equal(t, uint64(1), st.Released)
		if st.PastLimit == 1 {
			assert.Equal(t, RecoveryContext{Producer: 1, RequestID: 7}, r.nextLimit(t))
		}
	}
}

// A panicking OnHoldLimit is reported, and the gate goes on.
func TestGateHoldLimitPanicIsReported(t *testing.T) {
	errs := make(chan error, 4)
	rec, tr := feedtest.NewGlobalRecorder(), NewTaskLifecycleTracker()
	clk := clocktest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	g := glNew(t, rec, tr, GateConfig{HoldLimit: time.Second, Clock: clk, OnError: func(err error) { errs <- err },
		OnHoldLimit: func(RecoveryContext) { panic("boom") }})
	ctx := context.Background()
	g.OnRecoveryInitiated(ctx, glRecovery(1, 7))
	ks := glAllocate(tr, RecoveryContext{Producer: 1, RequestID: 7}, 1)
	g.OnProducerStatusChange(ctx, glUp(1))
	clk.Advance(time.Second)
	err := glRecvErr(t, errs)
	var le *feed.ListenerError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "GateConfig.OnHoldLimit", le.Method)
	ks[0].Complete()
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", rec.RequireCalls(t, 2)[1].String())
}

// A bound without OnHoldLimit, a negative one, and one without its unit are refused, the
// field named.
func TestGateHoldLimitConfigIsChecked(t *testing.T) {
	tr := NewTaskLifecycleTracker()
	rec := feedtest.NewGlobalRecorder()
	for _, tt := range []struct {
		cfg  GateConfig
		want string
	}{
		{GateConfig{HoldLimit: time.Minute}, "concurrent: NewStatusGate: GateConfig.HoldLimit is set and GateConfig.OnHoldLimit is nil: set what to do with an up held past the bound"},
		{GateConfig{HoldLimit: -time.Second, OnHoldLimit: func(RecoveryContext) {}}, "concurrent: NewStatusGate: GateConfig.HoldLimit -1s must not be negative (0 means no bound)"},
		{GateConfig{HoldLimit: 60, OnHoldLimit: func(RecoveryContext) {}}, "concurrent: NewStatusGate: GateConfig.HoldLimit 60ns is under the minimum of 1ms (a number without a unit is nanoseconds: 60 * time.Second?)"},
	} {
		g, err := NewStatusGate(rec, tr, tt.cfg)
		assert.Nil(t, g)
		assert.EqualError(t, err, tt.want)
	}
}
