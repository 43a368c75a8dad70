package recovery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// vf is a virtual producer: its recovery window is 3 h.
var vf, _ = feed.LookupProducer(feed.DefaultProducers(), 6)

// Rule 3 through the manager: a restored disconnection older than the longest recovery is
// recovered from exactly that long ago; the longest recovery is the shorter of
// Config.MaxRecoveryLength and the producer's MaxRecoveryWindow. The maximum bounds rule 1
// too.
func TestOldDisconnectionIsRecoveredFromTheMaxLength(t *testing.T) {
	require.Equal(t, 3*time.Hour, vf.MaxRecoveryWindow)
	ago := func(d time.Duration) time.Time { return t0.Add(-d) }
	disconnected := func(p int, at time.Time) recovery.Record {
		return recovery.Record{Producer: p, State: recovery.Disconnected, LastDisconnectedAt: at, LastSubscribedAt: at}
	}
	cases := []struct {
		name     string
		producer feed.Producer
		maxLen   time.Duration
		rec      recovery.Record
		want     time.Time
	}{
		{"70 h ago, default 60 h", lo, 0, disconnected(1, ago(70*time.Hour)), ago(60 * time.Hour)},
		{"exactly 60 h ago is rule 4", lo, 0, disconnected(1, ago(60*time.Hour)), ago(60 * time.Hour)},
		{"59 h ago is rule 4", lo, 0, disconnected(1, ago(59*time.Hour)), ago(59 * time.Hour)},
		{"MaxRecoveryLength 2 h", lo, 2 * time.Hour, disconnected(1, ago(70*time.Hour)), ago(2 * time.Hour)},
		{"MaxRecoveryLength 2 h, disconnected 1 h ago", lo, 2 * time.Hour, disconnected(1, ago(time.Hour)), ago(time.Hour)},
		{"virtual producer: its 3 h window", vf, 0, disconnected(6, ago(70*time.Hour)), ago(3 * time.Hour)},
		{"virtual producer: its window under a longer MaxRecoveryLength", vf, 10 * time.Hour, disconnected(6, ago(5*time.Hour)), ago(3 * time.Hour)},
		{"virtual producer: a shorter MaxRecoveryLength wins", vf, time.Hour, disconnected(6, ago(2*time.Hour)), ago(time.Hour)},
		{"rule 1 is bounded too", lo, 0,
			recovery.Record{Producer: 1, State: recovery.Recovering, RecoveryRequestedAt: ago(70 * time.Hour), RecoverySnapshotID: 3},
			ago(60 * time.Hour)},
		{"rule 2a is bounded too", lo, 0,
			recovery.Record{Producer: 1, State: recovery.Healthy, LastSubscribedAt: ago(70 * time.Hour)},
			ago(60 * time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := recovery.NewMemoryStore()
			require.NoError(t, store.Save(t.Context(), c.rec))
			r := newRig(t, recovery.Config{Producers: []feed.Producer{c.producer}, Store: store, MaxRecoveryLength: c.maxLen})
			st := r.state(c.producer.ID)
			assert.False(t, st.Up, "a restored producer starts down")
			r.alive(c.producer.ID, true)
			call := r.recovered()
			assert.Equal(t, c.producer.ID, call.producer)
			assert.Equal(t, c.want, call.after)
			r.snapshot(0, c.producer.ID, call.id)
			assert.Equal(t, "producer "+itoa(c.producer.ID)+" up (FirstRecoveryCompleted)", r.next())
			r.quiet()
		})
	}
}
