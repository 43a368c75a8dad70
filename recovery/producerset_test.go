package recovery_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// A disabled producer is not followed: its alives request no recovery, nothing is
// reported of it (the rig checks that only producer 1's initial state is told), and its
// system messages are counted apart from those of unknown producers.
func TestDisabledProducerIsNotRecoveredNorReported(t *testing.T) {
	r := newRig(t, recovery.Config{DisabledProducers: []int{pre.ID}})
	r.alive(pre.ID, true)
	r.snapshot(0, pre.ID, 7)
	r.api.none(t)
	r.quiet()
	st := r.m.Stats()
	assert.Equal(t, uint64(2), st.DisabledProducer)
	assert.Zero(t, st.UnknownProducer)
	_, ok := r.m.Producer(pre.ID)
	assert.False(t, ok, "a disabled producer has no state to show")

	r.alive(lo.ID, true)
	c := r.recovered()
	r.snapshot(0, lo.ID, c.id)
	assert.Equal(t, "producer 1 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
	assert.Len(t, r.m.Producers(), 1)
}

// OpenWithProducers follows the list given at Open (the account's producers, read from
// the API) instead of Config.Producers, less the disabled ones: their initial states are
// told first, in the list's order, and a producer of Config.Producers missing from the
// list is unknown.
func TestOpenWithProducersFollowsTheListGiven(t *testing.T) {
	clk := clocktest.NewFake(t0)
	api := &fakeAPI{calls: make(chan apiCall, 8)}
	global := feedtest.NewGlobalRecorder()
	vf, _ := feed.LookupProducer(feed.DefaultProducers(), 6)
	m, err := recovery.NewManager(api, global, feed.NodeID{}, 1, recovery.Config{Clock: clk, DisabledProducers: []int{pre.ID}})
	require.NoError(t, err)
	require.NoError(t, m.OpenWithProducers(t.Context(), []feed.Producer{vf, pre, lo}))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	r := &rig{t: t, clk: clk, m: m, api: api, global: global, errs: make(chan error, 8)}
	assert.Equal(t, "producer 6 down (InitialState)", r.next())
	assert.Equal(t, "producer 1 down (InitialState)", r.next())
	r.quiet()
	var ids []int
	for _, st := range m.Producers() {
		ids = append(ids, st.Producer)
		assert.Equal(t, recovery.Disconnected, st.State)
	}
	assert.Equal(t, []int{6, 1}, ids)

	r.alive(4, true) // BetPal: in feed.DefaultProducers, not in the account's list
	api.none(t)
	r.quiet()
	assert.Equal(t, uint64(1), m.Stats().UnknownProducer)

	r.alive(vf.ID, true)
	c := r.recovered()
	assert.Equal(t, vf.ID, c.producer)
	r.snapshot(0, vf.ID, c.id)
	assert.Equal(t, "producer 6 up (FirstRecoveryCompleted)", r.next())
	r.quiet()
}

// A list given to OpenWithProducers is checked as Config.Producers is; the error names
// the entry, and Open may be tried again.
func TestOpenWithProducersRefusesABadList(t *testing.T) {
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, 1, recovery.Config{})
	require.NoError(t, err)
	noPath := lo
	noPath.APIPath = ""
	err = m.OpenWithProducers(t.Context(), []feed.Producer{pre, noPath})
	require.ErrorContains(t, err, "OpenWithProducers[1]")
	require.ErrorContains(t, err, "APIPath")
	err = m.OpenWithProducers(t.Context(), []feed.Producer{lo, pre, lo})
	require.ErrorContains(t, err, "OpenWithProducers[2]: producer 1 listed twice")
	require.NoError(t, m.OpenWithProducers(t.Context(), []feed.Producer{lo}))
	assert.Len(t, m.Producers(), 1)
	require.NoError(t, m.Close(context.Background()))
}

// Config.DisabledProducers holds positive ids, each once.
func TestDisabledProducersAreChecked(t *testing.T) {
	_, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, 1, recovery.Config{DisabledProducers: []int{1, 0}})
	require.ErrorContains(t, err, "Config.DisabledProducers[1]: id 0 must be positive")
	_, err = recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, 1, recovery.Config{DisabledProducers: []int{3, 3}})
	require.ErrorContains(t, err, "Config.DisabledProducers[1]: producer 3 listed twice")
}
