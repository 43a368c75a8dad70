package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// A notification Claim makes dead does not count toward the limit: with the oldest due
// ones all at their last attempt, Claim selects again past them, a page at a time, and
// still hands out Limit live ones, as MemoryStore does.
func TestClaimPastTheDead(t *testing.T) {
	for name, s := range map[string]locks.Store{"postgres": newStore(t, pgtest.Pool(t)), "memory": locks.NewMemoryStore(0)} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			sensors(t, s, []locks.SensorID{"s1"}, client(t, s, "alice"))
			change := func(i int) locks.Change {
				return locks.Change{SensorID: "s1", Event: locks.EventChanged, State: locks.State(i % 2), At: at(time.Duration(i) * time.Second)}
			}
			require.Equal(t, 3, write(t, s, []locks.SensorID{"s1"}, locks.Effects{Now: t0, Notify: []locks.Change{change(0), change(1), change(2)}}))
			now := func(int) time.Duration { return 0 }
			first, err := s.Claim(ctx, locks.ClaimRequest{Now: t0, Limit: 10, MaxAttempts: 1, RetryAfter: now})
			require.NoError(t, err)
			require.Len(t, first, 3)
			// Their notifiers died: no Finish. Two more come, due later.
			require.Equal(t, 2, write(t, s, []locks.SensorID{"s1"}, locks.Effects{Now: at(time.Second), Notify: []locks.Change{change(3), change(4)}}))

			got, err := s.Claim(ctx, locks.ClaimRequest{Now: at(time.Minute), Limit: 2, MaxAttempts: 1,
				RetryAfter: func(int) time.Duration { return time.Hour }})
			require.NoError(t, err)
			require.Len(t, got, 2)
			for _, d := range got {
				assert.Equal(t, 1, d.Attempts)
				assert.Equal(t, at(time.Minute+time.Hour), d.NextAttempt)
			}
			dead, err := s.DeadNotifications(ctx, 0, 10)
			require.NoError(t, err)
			require.Len(t, dead, 3)
			for i, n := range dead {
				assert.Equal(t, first[i].ID, n.ID)
				assert.Equal(t, "no answer to attempt 1 of 1", n.Reason)
				assert.Equal(t, at(time.Minute), n.Finished)
			}
			n, next, err := s.Pending(ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, n)
			assert.Equal(t, at(time.Minute+time.Hour), next)
		})
	}
}
