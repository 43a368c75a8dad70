package recovery_test

import (
	"context"
	"sync"
	"testing"
	"time"

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

// producerSource is a ProducerSource that answers with list, or err.
type producerSource struct {
	list []feed.Producer
	err  error
}

func (s producerSource) Producers(context.Context) ([]feed.Producer, error) { return s.list, s.err }

// errorLog collects what OnError was given.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// Open follows the producers of Config.ProducerSource (the account's, read from the API)
// instead of Config.Producers, less the disabled ones: their initial states are told
// first, in the list's order, and a producer of Config.Producers missing from the list
// is unknown.
func TestOpenFollowsTheProducerSource(t *testing.T) {
	clk := clocktest.NewFake(t0)
	api := &fakeAPI{calls: make(chan apiCall, 8)}
	global := feedtest.NewGlobalRecorder()
	vf, _ := feed.LookupProducer(feed.DefaultProducers(), 6)
	m, err := recovery.NewManager(api, global, feed.NodeID{}, recovery.Config{Clock: clk, DisabledProducers: []int{pre.ID},
		ProducerSource: producerSource{list: []feed.Producer{vf, pre, lo}}})
	require.NoError(t, err)
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	r := &rig{t: t, clk: clk, m: m, api: api, global: global, errs: make(chan error, 8), handlers: []feed.SystemHandler{m}}
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

// A producer the source lists and Config.Producers lists too keeps the heartbeat limit
// given there (the API does not describe one); the others keep the source's.
func TestProducerSourceKeepsConfiguredHeartbeatLimits(t *testing.T) {
	slow := lo
	slow.HeartbeatLimit = 40 * time.Second
	vf, _ := feed.LookupProducer(feed.DefaultProducers(), 6)
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{
		Producers: []feed.Producer{slow}, ProducerSource: producerSource{list: []feed.Producer{lo, vf}}})
	require.NoError(t, err)
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	limits := map[int]time.Duration{}
	for _, st := range m.Producers() {
		limits[st.Producer] = st.HeartbeatLimit
	}
	assert.Equal(t, map[int]time.Duration{1: 40 * time.Second, 6: vf.HeartbeatLimit}, limits)
}

// A source that cannot be read makes Open follow Config.Producers, and say why; one that
// refuses the access token fails Open, as does Open's ctx ending.
func TestProducerSourceFailures(t *testing.T) {
	var errs errorLog
	down := &feed.APIError{StatusCode: 503, Method: "GET", URL: "https://api.example.com/v1/descriptions/producers.xml"}
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{
		Producers: []feed.Producer{pre}, ProducerSource: producerSource{err: down}, OnError: errs.add})
	require.NoError(t, err)
	require.NoError(t, m.Open(t.Context()))
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	require.Len(t, m.Producers(), 1)
	assert.Equal(t, pre.ID, m.Producers()[0].Producer)
	got := errs.all()
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0], feed.ErrServerError)
	assert.ErrorContains(t, got[0], "following Config.Producers instead")

	refused := &feed.APIError{StatusCode: 401, Method: "GET", URL: down.URL}
	m2, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{ProducerSource: producerSource{err: refused}})
	require.NoError(t, err)
	err = m2.Open(t.Context())
	assert.ErrorIs(t, err, feed.ErrUnauthorized)
	assert.ErrorContains(t, err, "refused the access token")
	require.NoError(t, m2.Close(context.Background()))

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m3, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{ProducerSource: producerSource{err: context.Canceled}})
	require.NoError(t, err)
	assert.ErrorIs(t, m3.Open(ctx), context.Canceled)
	require.NoError(t, m3.Close(context.Background()))
}

// The source's list is checked as Config.Producers is; the error names the entry, and
// Open may be tried again.
func TestProducerSourceBadListIsRefused(t *testing.T) {
	noPath := lo
	noPath.APIPath = ""
	src := &producerSource{list: []feed.Producer{pre, noPath}}
	m, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{ProducerSource: src})
	require.NoError(t, err)
	err = m.Open(t.Context())
	require.ErrorContains(t, err, "Config.ProducerSource[1]")
	require.ErrorContains(t, err, "APIPath")
	src.list = []feed.Producer{lo, pre, lo}
	err = m.Open(t.Context())
	require.ErrorContains(t, err, "Config.ProducerSource[2]: producer 1 listed twice")
	src.list = []feed.Producer{lo}
	require.NoError(t, m.Open(t.Context()))
	assert.Len(t, m.Producers(), 1)
	require.NoError(t, m.Close(context.Background()))
}

// Config.DisabledProducers holds positive ids, each once.
func TestDisabledProducersAreChecked(t *testing.T) {
	_, err := recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{DisabledProducers: []int{1, 0}})
	require.ErrorContains(t, err, "Config.DisabledProducers[1]: id 0 must be positive")
	_, err = recovery.NewManager(&fakeAPI{}, nil, feed.NodeID{}, recovery.Config{DisabledProducers: []int{3, 3}})
	require.ErrorContains(t, err, "Config.DisabledProducers[1]: producer 3 listed twice")
}
