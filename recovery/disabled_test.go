package recovery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// newRigWithAPI is newRig whose manager has a fake API even when the config disables
// recoveries, so that a test can check the API is never called.
func newRigWithAPI(t *testing.T, cfg recovery.Config) *rig {
	t.Helper()
	api := &fakeAPI{calls: make(chan apiCall, 64)}
	r := newRig(t, cfg, withRequester(api))
	r.api = api
	return r
}

// With recoveries disabled a recovery the manager would request is skipped: the producer
// is healthy at once, with no API call, and the skip is counted.
func TestDisabledRecoveryMakesTheProducerHealthyAtOnce(t *testing.T) {
	r := newRigWithAPI(t, recovery.Config{Disabled: true})
	r.alive(1, true)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
	r.api.none(t)
	st := r.state(1)
	assert.Equal(t, recovery.Healthy, st.State)
	assert.True(t, st.Up)
	assert.False(t, st.RecoveryPending)
	assert.Zero(t, st.RecoverySnapshotID)
	stats := r.m.Stats()
	assert.Equal(t, uint64(1), stats.RecoveriesSkipped)
	assert.Zero(t, stats.RecoveriesRequested)

	// A later outage is skipped the same way.
	r.clk.Advance(5 * time.Second)
	r.alive(1, false)
	assert.Equal(t, "producer 1 down (Other)", r.next())
	assert.Equal(t, "producer 1 up (ReturnedFromInactivity)", r.next())
	r.quiet()
	r.api.none(t)
	assert.Equal(t, uint64(2), r.m.Stats().RecoveriesSkipped)
}

// A producer restored as recovering is made healthy at its first alive too.
func TestDisabledRecoverySkipsARestoredRecovery(t *testing.T) {
	store := recovery.NewMemoryStore()
	require.NoError(t, store.Save(t.Context(), recovery.Record{Producer: 1, State: recovery.Recovering,
		RecoveryRequestedAt: t0.Add(-time.Minute), RecoverySnapshotID: 9}))
	r := newRigWithAPI(t, recovery.Config{Disabled: true, Store: store})
	r.alive(1, true)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.api.none(t)
	recs, err := store.Load(t.Context())
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, recovery.Healthy, recs[0].State)
}

// The package reads no environment: FEEDKIT_RECOVERY_ENABLED, which the root package's
// SDK reads over Config.Disabled, changes nothing for a manager made directly.
func TestManagerIgnoresTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		env      string
		disabled bool
	}{{"false", false}, {"true", true}} {
		t.Run(fmt.Sprintf("env=%q,disabled=%v", c.env, c.disabled), func(t *testing.T) {
			t.Setenv("FEEDKIT_RECOVERY_ENABLED", c.env)
			r := newRigWithAPI(t, recovery.Config{Disabled: c.disabled})
			r.alive(1, true)
			if !c.disabled {
				assert.Equal(t, t0.Add(-10*time.Minute), r.recovered().after)
				assert.Zero(t, r.m.Stats().RecoveriesSkipped)
			} else {
				assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
				r.api.none(t)
				assert.Equal(t, uint64(1), r.m.Stats().RecoveriesSkipped)
			}
			r.quiet()
		})
	}
}

// Recoveries enabled need a Requester; disabled ones do not.
func TestRequesterIsRequiredWhenEnabled(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("disabled=%v", disabled), func(t *testing.T) {
			m, err := recovery.NewManager(nil, nil, feed.NodeID{}, recovery.Config{Disabled: disabled})
			if !disabled {
				assert.ErrorIs(t, err, recovery.ErrNoRequester)
				assert.Nil(t, m)
				return
			}
			require.NoError(t, err)
			require.NoError(t, m.Close(context.Background()))
		})
	}
}
