package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// oneAnHour allows a single request per hour, of any length: a failed request that still
// counted would refuse the next attempt.
func oneAnHour() recovery.Limits {
	return recovery.Limits{{Windows: []recovery.Window{{Length: time.Hour, Max: 1}}}}
}

// A request the recovery API fails is reported as a RequestError wrapping the cause, its
// ledger place is given back, and it is tried again after a capped exponential backoff with
// jitter 0.5 (each delay within [d/2, d]); the producer stays down meanwhile. Once the
// API accepts, the normal flow goes on, and the account's limit holds exactly one request.
func TestFailedRequestsAreRetriedWithBackoffAndNotCounted(t *testing.T) {
	const url = "https://api.example.com/v1/liveodds/recovery/initiate_request"
	cases := []struct {
		name string
		err  error
		is   error // what the reported error matches
	}{
		{"HTTP 503", &feed.APIError{StatusCode: 503, Method: "POST", URL: url, Body: "maintenance"}, feed.ErrServerError},
		{"HTTP 500", &feed.APIError{StatusCode: 500, Method: "POST", URL: url}, feed.ErrServerError},
		{"HTTP 429", &feed.APIError{StatusCode: 429, Method: "POST", URL: url, RetryAfter: time.Second}, feed.ErrTooManyRequests},
		{"timeout", fmt.Errorf("feed: recovery API: %w", context.DeadlineExceeded), context.DeadlineExceeded},
		{"plain error", errBoom, errBoom},
	}
	const initial, maxDelay = time.Second, 4 * time.Second
	nominal := []time.Duration{initial, 2 * initial, maxDelay, maxDelay} // capped at RetryMax
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			led := newCountingLedger(recovery.NewMemoryLedger())
			// No alives while the backoff runs: keep the heartbeat check out of the way.
			r := newRig(t, recovery.Config{Ledger: led, Limits: oneAnHour(), RetryInitial: initial, RetryMax: maxDelay,
				HeartbeatLimits: quietHeartbeat})
			for range nominal {
				r.api.failNext(c.err)
			}
			from := t0.Add(-10 * time.Minute)
			r.alive(1, true)
			var lastID int64
			for i, d := range nominal {
				call := r.api.next(t)
				assert.Equal(t, from, call.after)
				assert.Greater(t, call.id, lastID, "a new id for each attempt")
				lastID = call.id

				err := r.nextErr()
				re := requestErr(t, err)
				assert.ErrorIs(t, err, c.is)
				assert.NotErrorIs(t, err, recovery.ErrRateLimited, "attempt %d: a failed request must not count", i)
				var apiErr *feed.APIError
				if errors.As(c.err, &apiErr) {
					var got *feed.APIError
					require.ErrorAs(t, err, &got)
					assert.Equal(t, apiErr.StatusCode, got.StatusCode)
				}
				assert.Equal(t, call.id, re.RequestID)
				assert.Equal(t, from, re.After)
				assert.False(t, re.Release)
				wait := re.RetryAt.Sub(r.clk.Now())
				assert.GreaterOrEqual(t, wait, d/2, "attempt %d", i)
				assert.LessOrEqual(t, wait, d, "attempt %d", i)

				r.flush()
				st := r.state(1)
				assert.Equal(t, recovery.Disconnected, st.State)
				assert.False(t, st.Up)
				assert.True(t, st.RecoveryPending)
				assert.Equal(t, re.RetryAt, st.RetryAt)

				r.setClock(re.RetryAt.Add(-time.Nanosecond))
				r.api.none(t)
				r.setClock(re.RetryAt)
			}
			sentAt := r.clk.Now()
			call := r.recovered() // the fifth attempt is accepted: the four failures did not count
			assert.Greater(t, call.id, lastID)
			assert.Equal(t, from, call.after)
			reserves, releases := led.calls()
			assert.Equal(t, len(nominal)+1, reserves)
			assert.Equal(t, len(nominal), releases, "every failed request gave its place back")
			st := r.state(1)
			assert.Equal(t, recovery.Recovering, st.State)
			assert.Zero(t, st.RetryAt)
			assert.Equal(t, uint64(len(nominal)), r.m.Stats().RequestsFailed)

			r.snapshot(0, 1, call.id)
			assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())

			// The limit holds exactly the one accepted request.
			r.clk.Advance(5 * time.Second)
			r.alive(1, false)
			assert.Equal(t, "producer 1 down (Other)", r.next())
			err := r.nextErr()
			require.ErrorIs(t, err, recovery.ErrRateLimited)
			assert.Equal(t, sentAt.Add(time.Hour), requestErr(t, err).RetryAt)
			r.quiet()
		})
	}
}

// After a failure the backoff starts over: a later need begins again at RetryInitial.
func TestBackoffStartsOverAfterASuccess(t *testing.T) {
	r := newRig(t, recovery.Config{RetryInitial: time.Minute, RetryMax: time.Hour, HeartbeatLimits: quietHeartbeat})
	r.api.failNext(errBoom, errBoom)
	r.alive(1, true)
	for range 2 {
		r.api.next(t)
		re := requestErr(t, r.nextErr())
		r.flush()
		r.setClock(re.RetryAt)
	}
	c := r.recovered()
	r.snapshot(0, 1, c.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())

	r.clk.Advance(5 * time.Second)
	r.api.failNext(errBoom)
	r.alive(1, false)
	require.Equal(t, "producer 1 down (Other)", r.next())
	r.api.next(t)
	re := requestErr(t, r.nextErr())
	wait := re.RetryAt.Sub(r.clk.Now())
	assert.GreaterOrEqual(t, wait, 30*time.Second)
	assert.LessOrEqual(t, wait, time.Minute, "the first delay again, not the third")
}

// A ledger that fails is a failed request too: reported, nothing sent, retried after the
// backoff.
func TestLedgerFailureIsRetried(t *testing.T) {
	led := newCountingLedger(recovery.NewMemoryLedger())
	led.reserveErrs = []error{errBoom}
	r := newRig(t, recovery.Config{Ledger: led})
	r.alive(1, true)
	err := r.nextErr()
	re := requestErr(t, err)
	assert.ErrorIs(t, err, errBoom)
	assert.False(t, re.Release)
	r.api.none(t)
	r.flush()
	assert.True(t, r.state(1).RecoveryPending)
	wait := re.RetryAt.Sub(r.clk.Now())
	assert.GreaterOrEqual(t, wait, recovery.DefaultRetryInitial/2)
	assert.LessOrEqual(t, wait, recovery.DefaultRetryInitial)
	r.setClock(re.RetryAt)
	c := r.recovered()
	assert.Equal(t, t0.Add(-10*time.Minute), c.after)
	_, releases := led.calls()
	assert.Zero(t, releases, "nothing was reserved by the failed call")
	assert.Equal(t, uint64(1), r.m.Stats().RequestsFailed)
}

// When the API fails and the ledger cannot give the place back, both are reported: a
// RequestError with Release set for the ledger, then the API's failure; the request is
// retried all the same.
func TestReleaseFailureIsReported(t *testing.T) {
	errRelease := errors.New("ledger down")
	led := newCountingLedger(recovery.NewMemoryLedger())
	led.releaseErr = errRelease
	r := newRig(t, recovery.Config{Ledger: led})
	api503 := &feed.APIError{StatusCode: 503, Method: "POST", URL: "https://api.example.com/v1/liveodds/recovery/initiate_request"}
	r.api.failNext(api503)
	r.alive(1, true)
	call := r.api.next(t)

	err := r.nextErr()
	rel := requestErr(t, err)
	assert.True(t, rel.Release)
	assert.ErrorIs(t, err, errRelease)
	assert.Equal(t, call.id, rel.RequestID)
	assert.Equal(t, 1, rel.Producer)
	assert.Zero(t, rel.RetryAt)
	assert.Contains(t, err.Error(), "could not be released")

	err = r.nextErr()
	failed := requestErr(t, err)
	assert.False(t, failed.Release)
	assert.ErrorIs(t, err, feed.ErrServerError)
	assert.Equal(t, call.id, failed.RequestID)
	assert.NotZero(t, failed.RetryAt)
	_, releases := led.calls()
	assert.Equal(t, 1, releases)

	r.flush()
	r.setClock(failed.RetryAt)
	c := r.recovered()
	r.snapshot(0, 1, c.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
}

// A 429 or 503 with Retry-After is tried again no sooner than the API asked.
func TestRetryAfterFromTheAPIIsHonoured(t *testing.T) {
	r := newRig(t, recovery.Config{HeartbeatLimits: map[int]time.Duration{1: time.Hour}})
	r.api.failNext(&feed.APIError{StatusCode: 429, Method: "POST", URL: "http://api/x", RetryAfter: 90 * time.Second})
	r.alive(1, true)
	r.api.next(t)
	var re *recovery.RequestError
	require.ErrorAs(t, r.nextErr(), &re)
	assert.Equal(t, t0.Add(90*time.Second), re.RetryAt)
	r.advance(90*time.Second-time.Millisecond, 15*time.Second)
	r.api.none(t)
	r.advance(time.Millisecond, time.Millisecond)
	r.recovered()
}

// A retry due by the clock's time goes out at a Flush even when its timer has not fired:
// a timer is set for a duration from the moment it is set, so one set while a fake clock
// moved past the retry falls due after it. Here the manager's timers never fire at all.
func TestFlushSendsARetryDueBeforeItsTimerFires(t *testing.T) {
	r := newRig(t, recovery.Config{RetryInitial: time.Minute, RetryMax: time.Hour, HeartbeatLimits: quietHeartbeat},
		withClock(func(f *clocktest.Fake) clock.Clock { return lateTimers{f} }))
	r.api.failNext(errBoom)
	r.alive(1, true)
	r.api.next(t)
	re := requestErr(t, r.nextErr())
	r.setClock(re.RetryAt)
	c := r.recovered()
	r.snapshot(0, 1, c.id)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
}

// lateTimers is a fake clock whose timers never fire; its tickers do.
type lateTimers struct{ *clocktest.Fake }

func (lateTimers) NewTimer(time.Duration) clock.Timer { return neverTimer{} }

type neverTimer struct{}

func (neverTimer) C() <-chan time.Time      { return nil }
func (neverTimer) Stop() bool               { return true }
func (neverTimer) Reset(time.Duration) bool { return true }
