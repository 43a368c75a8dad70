package recovery_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/recovery"
)

// The heartbeat limit is one boundary, the same on both paths that measure a silence: the
// gap between two alives (the alive rule) and the silence since the last alive at a
// check (the missing-heartbeat check, through the heartbeat monitor). A silence of
// exactly the limit is within it; one nanosecond more is past it.

func TestAliveGapAtTheHeartbeatLimit(t *testing.T) {
	tests := []struct {
		name string
		gap  time.Duration
		down bool
	}{
		{"exactly the limit keeps it healthy", lo.HeartbeatLimit, false},
		{"the limit and 1ns disconnects it", lo.HeartbeatLimit + time.Nanosecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, recovery.Config{CheckInterval: time.Hour}) // no check runs: the alive decides
			r.healthy(1)
			r.clk.Advance(time.Second)
			r.alive(1, true) // after the up: the recovery point
			prev := r.clk.Now()
			r.clk.Advance(tt.gap)
			r.alive(1, true)
			if !tt.down {
				r.quiet()
				r.api.none(t)
				assert.Equal(t, recovery.Healthy, r.state(1).State, "an alive %v after the previous one", tt.gap)
				return
			}
			assert.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next())
			c := r.recovered()
			assert.Equal(t, prev, c.after, "recovered from the previous alive")
		})
	}
}

// The check finds a producer silent for the limit and 1ns at the very check where that
// is so, and leaves one silent for exactly the limit healthy until the next check: with a
// limit the check interval divides and one it does not, and with the checks counted from
// the manager's creation or from an Open that came later (the monitor is made by
// NewManager, the check ticker by Open).
func TestMissingHeartbeatCheckAtTheHeartbeatLimit(t *testing.T) {
	for _, limit := range []time.Duration{check, 20 * time.Second} {
		for _, openAfter := range []time.Duration{0, 5 * time.Second} {
			for _, over := range []time.Duration{0, time.Nanosecond} {
				name := fmt.Sprintf("limit %v, opened after %v, silent for the limit+%v", limit, openAfter, over)
				t.Run(name, func(t *testing.T) {
					cfg := recovery.Config{HeartbeatLimits: map[int]time.Duration{lo.ID: limit}}
					r := newRigOpenedAfter(t, cfg, t0, openAfter)
					r.healthy(1)
					opened := r.clk.Now() // the checks run at opened + k*check
					at := opened.Add((limit/check + 2) * check)
					last := at.Add(-limit - over)
					r.alivesUntil(1, last)

					r.advance(at.Sub(r.clk.Now())-time.Nanosecond, check)
					require.Equal(t, recovery.Healthy, r.state(1).State, "before the check")
					r.advance(time.Nanosecond, check) // the check at `at`
					silence := r.clk.Now().Sub(last)
					require.Equal(t, limit+over, silence)
					if over == 0 {
						r.quiet()
						require.Equal(t, recovery.Healthy, r.state(1).State,
							"silent for exactly the limit (%v) at a check", limit)
						r.advance(check, check) // past it at the next check
					}
					assert.Equal(t, "producer 1 down (AliveIntervalViolation)", r.next(), "silent for %v, limit %v", silence, limit)
					st := r.state(1)
					assert.Equal(t, recovery.Disconnected, st.State)
					assert.Equal(t, last, st.LastDisconnectedAt, "disconnected from the last alive")
					r.quiet()
				})
			}
		}
	}
}

// alivesUntil sends alives of producer p every 5 s, well within any limit of the tests,
// the last one at last, letting the checks on the way run.
func (r *rig) alivesUntil(p int, last time.Time) {
	r.t.Helper()
	for r.clk.Now().Add(5 * time.Second).Before(last) {
		r.advance(5*time.Second, check)
		r.alive(p, true)
	}
	r.advance(last.Sub(r.clk.Now()), check)
	r.alive(p, true)
	r.quiet()
	require.Equal(r.t, recovery.Healthy, r.state(p).State, "alives on time")
}
