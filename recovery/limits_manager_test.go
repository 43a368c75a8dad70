package recovery_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// tierSetup configures producer 1 so that its first alive at t0 asks for a recovery of the
// given length: nothing known for the short tier (rule 2b, 10 min), a restored
// disconnection for the others (rule 4).
func tierSetup(t *testing.T, cfg *recovery.Config, length time.Duration) {
	t.Helper()
	if length == recovery.DefaultAssumedDowntime {
		return
	}
	store := recovery.NewMemoryStore()
	require.NoError(t, store.Save(t.Context(), recovery.Record{Producer: 1, State: recovery.Disconnected,
		LastSubscribedAt: t0.Add(-length), LastDisconnectedAt: t0.Add(-length)}))
	cfg.Store = store
}

const (
	shortLen = 10 * time.Minute // first alive, nothing known: under 30 min
	midLen   = 2 * time.Hour    // 30 min – 24 h
	longLen  = 30 * time.Hour   // 24 h – 60 h
)

// A request the account's limits refuse is reported as a RequestError matching
// ErrRateLimited whose RetryAt is the exact moment the oldest request counted leaves the
// full window; nothing is sent meanwhile, however many alives arrive, and the request goes
// out at RetryAt, once.
func TestRateLimitedRequestIsSentAtTheWindowEdge(t *testing.T) {
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	cases := []struct {
		name    string
		length  time.Duration
		class   int
		prefill []time.Time // the account's earlier requests of that tier
		retryAt time.Time
	}{
		{"short tier, 20 per 10 min", shortLen, 0,
			spread(ago(9*time.Minute+30*time.Second), 15*time.Second, 20), t0.Add(30 * time.Second)},
		{"short tier, 60 per hour", shortLen, 0,
			spread(ago(50*time.Minute), 30*time.Second, 60), t0.Add(10 * time.Minute)},
		{"mid tier, 4 per 10 min", midLen, 1,
			spread(ago(8*time.Minute), time.Minute, 4), t0.Add(2 * time.Minute)},
		{"mid tier, 10 per hour", midLen, 1,
			spread(ago(45*time.Minute), 4*time.Minute, 10), t0.Add(15 * time.Minute)},
		{"long tier, 2 per 30 min", longLen, 2,
			spread(ago(20*time.Minute), 10*time.Minute, 2), t0.Add(10 * time.Minute)},
		{"long tier, 4 per 2 h", longLen, 2,
			spread(ago(100*time.Minute), 20*time.Minute, 4), t0.Add(20 * time.Minute)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := recovery.NewMemoryLedger()
			fill(t, inner, recovery.DefaultAccount, c.length, c.prefill...)
			led := newCountingLedger(inner)
			cfg := recovery.Config{Ledger: led}
			tierSetup(t, &cfg, c.length)
			r := newRig(t, cfg)
			from := t0.Add(-c.length)

			r.alive(1, true)
			err := r.nextErr()
			re := requestErr(t, err)
			assert.ErrorIs(t, err, recovery.ErrRateLimited)
			assert.Equal(t, 1, re.Producer)
			assert.Equal(t, from, re.After)
			assert.Equal(t, c.retryAt, re.RetryAt, "the window edge")
			assert.False(t, re.Release)
			assert.Equal(t, c.class, recovery.DefaultLimits().Class(led.lastReserve().Length))
			assert.Equal(t, recovery.DefaultAccount, led.lastReserve().Account)
			r.api.none(t)

			r.flush()
			st := r.state(1)
			assert.Equal(t, recovery.Disconnected, st.State)
			assert.False(t, st.Up)
			assert.True(t, st.RecoveryPending)
			assert.Equal(t, c.retryAt, st.RetryAt)
			assert.Equal(t, uint64(1), r.m.Stats().RequestsRateLimited)

			// Alives keep coming every 10 s while the producer waits: none of them sends.
			for at := t0.Add(10 * time.Second); at.Before(c.retryAt); at = at.Add(10 * time.Second) {
				r.setClock(at)
				r.alive(1, true)
			}
			r.setClock(c.retryAt.Add(-time.Nanosecond))
			r.api.none(t)
			reserves, _ := led.calls()
			assert.Equal(t, 1, reserves, "nothing asked of the ledger before RetryAt")
			assert.True(t, r.state(1).RecoveryPending)

			r.setClock(c.retryAt)
			call := r.recovered()
			assert.Equal(t, from, call.after, "the start chosen when the need arose")
			last := led.lastReserve()
			assert.Equal(t, c.retryAt, last.At)
			assert.Equal(t, c.retryAt.Sub(from), last.Length)
			assert.Equal(t, c.class, recovery.DefaultLimits().Class(last.Length), "still the same tier")

			r.snapshot(0, 1, call.id)
			assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
			r.quiet()
			reserves, releases := led.calls()
			assert.Equal(t, 2, reserves, "one refused, one allowed: no busy loop")
			assert.Zero(t, releases)
			assert.Equal(t, uint64(1), r.m.Stats().RequestsRateLimited)
			assert.Equal(t, uint64(1), r.m.Stats().RecoveriesRequested)
		})
	}
}

// One request below the maximum of every window, or requests that have just left the
// window, or requests of another tier or another account, leave room: the request goes
// out at once. Requests of other nodes of the same account count (fill records node 7).
func TestRateLimitsAllowUpToTheMax(t *testing.T) {
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	cases := []struct {
		name    string
		length  time.Duration
		account string
		fillLen time.Duration
		prefill []time.Time
	}{
		{"short tier, 19 in 10 min", shortLen, recovery.DefaultAccount, shortLen,
			spread(ago(9*time.Minute), 15*time.Second, 19)},
		{"short tier, 20 exactly 10 min ago have left the window", shortLen, recovery.DefaultAccount, shortLen,
			spread(ago(10*time.Minute), 0, 20)},
		{"short tier, 59 in the hour", shortLen, recovery.DefaultAccount, shortLen,
			spread(ago(50*time.Minute), 30*time.Second, 59)},
		{"mid tier, 3 in 10 min", midLen, recovery.DefaultAccount, midLen,
			spread(ago(3*time.Minute), time.Minute, 3)},
		{"mid tier, 9 in the hour", midLen, recovery.DefaultAccount, midLen,
			spread(ago(45*time.Minute), 4*time.Minute, 9)},
		{"mid tier, 4 exactly 10 min ago", midLen, recovery.DefaultAccount, midLen,
			spread(ago(10*time.Minute), 0, 4)},
		{"long tier, 1 in 30 min", longLen, recovery.DefaultAccount, longLen,
			[]time.Time{ago(time.Minute)}},
		{"long tier, 3 in 2 h", longLen, recovery.DefaultAccount, longLen,
			spread(ago(100*time.Minute), 35*time.Minute, 3)},
		{"long tier, 4 exactly 2 h ago", longLen, recovery.DefaultAccount, longLen,
			[]time.Time{ago(2 * time.Hour), ago(2 * time.Hour), ago(90 * time.Minute), ago(90 * time.Minute)}},
		{"another tier full", longLen, recovery.DefaultAccount, shortLen,
			spread(ago(5*time.Minute), time.Second, 20)},
		{"another account full", shortLen, "other", shortLen,
			spread(ago(5*time.Minute), time.Second, 20)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := recovery.NewMemoryLedger()
			fill(t, inner, c.account, c.fillLen, c.prefill...)
			led := newCountingLedger(inner)
			cfg := recovery.Config{Ledger: led}
			tierSetup(t, &cfg, c.length)
			r := newRig(t, cfg)
			r.alive(1, true)
			call := r.recovered()
			assert.Equal(t, t0.Add(-c.length), call.after)
			r.quiet()
			assert.Equal(t, t0, led.lastReserve().At)
		})
	}
}

// The manager's own successful requests fill the account's windows: with two requests
// allowed per ten minutes, the third waits for the first to leave the window.
func TestOwnRequestsFillTheWindow(t *testing.T) {
	led := newCountingLedger(recovery.NewMemoryLedger())
	two := recovery.Limits{{Windows: []recovery.Window{{Length: 10 * time.Minute, Max: 2}}}}
	r := newRig(t, recovery.Config{Ledger: led, Limits: two})
	r.healthy(1) // request 1 at t0
	// No alive has been read since its replay: the recovery point is where it went back to.
	point := t0.Add(-recovery.DefaultAssumedDowntime)

	r.clk.Advance(5 * time.Second)
	r.alive(1, false)
	assert.Equal(t, "producer 1 down (Other)", r.next())
	second := r.recovered() // request 2 at t0+5s
	assert.Equal(t, point, second.after, "rule 2a")

	r.clk.Advance(5 * time.Second)
	r.alive(1, false) // recovering: asks again for what request 2 covered (rule 1)
	err := r.nextErr()
	re := requestErr(t, err)
	require.ErrorIs(t, err, recovery.ErrRateLimited)
	assert.Equal(t, point, re.After, "rule 1: the disconnection request 2 covered")
	assert.Equal(t, t0.Add(10*time.Minute), re.RetryAt, "request 1 leaves the window")
	assert.Equal(t, fmt.Sprintf("recovery: producer 1 request %d from 2026-11-21T11:50:00Z: "+
		"recovery: rate limit reached; next attempt at 2026-11-21T12:10:00Z", re.RequestID), err.Error())
	r.flush()
	assert.Equal(t, recovery.Recovering, r.state(1).State)

	r.setClock(re.RetryAt.Add(-time.Nanosecond))
	r.api.none(t)
	r.snapshot(0, 1, second.id)
	r.quiet() // a new request is needed: the replay of request 2 does not end it
	r.setClock(re.RetryAt)
	third := r.recovered()
	assert.Equal(t, point, third.after)
	r.snapshot(0, 1, third.id)
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
	reserves, _ := led.calls()
	assert.Equal(t, 4, reserves)
}

// A request postponed past the longest recovery is clamped when it goes out: a producer
// disconnected exactly MaxRecoveryLength ago and refused for two minutes asks for
// MaxRecoveryLength before the moment it is sent.
func TestPostponedRequestIsClampedToTheMaxLengthWhenSent(t *testing.T) {
	inner := recovery.NewMemoryLedger()
	fill(t, inner, recovery.DefaultAccount, midLen, spread(t0.Add(-8*time.Minute), time.Minute, 4)...)
	cfg := recovery.Config{Ledger: inner, MaxRecoveryLength: midLen}
	tierSetup(t, &cfg, midLen)
	r := newRig(t, cfg)
	r.alive(1, true)
	re := requestErr(t, r.nextErr())
	require.ErrorIs(t, re, recovery.ErrRateLimited)
	assert.Equal(t, t0.Add(-midLen), re.After)
	assert.Equal(t, t0.Add(2*time.Minute), re.RetryAt)
	r.setClock(re.RetryAt)
	call := r.recovered()
	assert.Equal(t, re.RetryAt.Add(-midLen), call.after, "never more than MaxRecoveryLength back")
}
