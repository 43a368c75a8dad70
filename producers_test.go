package feedkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// producersRig is an SDK on the embedded broker with the simulator's API, for an account
// that receives LO and Ctrl only.
type producersRig struct {
	sim    *feedtest.Simulator
	global *feedtest.GlobalRecorder
	sdk    *feedkit.SDK
	errs   *errorLog
}

type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

func newProducersRig(t *testing.T, rc recovery.Config, token string, wrap func(http.Handler) http.Handler) (*producersRig, error) {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	all := feed.DefaultProducers()
	lo, _ := feed.LookupProducer(all, 1)
	ctrl, _ := feed.LookupProducer(all, 3)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo, ctrl}})
	require.NoError(t, err)
	h := sim.RecoveryHandler()
	if wrap != nil {
		h = wrap(h)
	}
	api := httptest.NewServer(h)
	t.Cleanup(api.Close)
	r := &producersRig{sim: sim, global: feedtest.NewGlobalRecorder(), errs: &errorLog{}}
	r.sdk, err = feedkit.New(feedkit.Config{Transport: broker, Global: r.global, Node: feed.Node(1),
		API:      feedapi.Config{BaseURL: api.URL, AccessToken: token},
		Recovery: rc,
		OnError:  r.errs.add,
	})
	require.NoError(t, err)
	require.NoError(t, r.sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
	t.Cleanup(func() { _ = r.sdk.Close(context.Background()) })
	return r, r.sdk.Open(t.Context())
}

// recover sends an alive of producer id and checks that it brings a recovery, then the
// producer's first up.
func (r *producersRig) recover(t *testing.T, id int) {
	t.Helper()
	require.NoError(t, r.sim.SendAlive(t.Context(), id, true))
	c := r.global.RequireNext(t)
	require.Equal(t, feedtest.CallRecoveryInitiated, c.Kind, c.String())
	require.Equal(t, id, c.Recovery.Producer)
	require.Equal(t, fmt.Sprintf("producer %d up (FirstRecoveryCompleted)", id), r.global.RequireNext(t).String())
}

// The SDK follows the producers the API says the account receives, not the fixed list of
// eleven: LO and Ctrl start down (told first), are recovered and come up, and no other
// producer is ever reported, so none stays "disconnected" for ever.
func TestSDKFollowsTheAccountsProducersFromTheAPI(t *testing.T) {
	r, err := newProducersRig(t, recovery.Config{}, feedtest.DefaultAccessToken, nil)
	require.NoError(t, err)
	assert.Equal(t, "producer 1 down (InitialState)", r.global.RequireNext(t).String())
	assert.Equal(t, "producer 3 down (InitialState)", r.global.RequireNext(t).String())
	assert.Equal(t, "connection up on session 0 (all messages)", r.global.RequireNext(t).String())
	r.recover(t, 1)
	r.recover(t, 3)
	var ids []int
	for _, st := range r.sdk.Producers() {
		ids = append(ids, st.Producer)
		assert.True(t, st.Up, "producer %d", st.Producer)
	}
	assert.Equal(t, []int{1, 3}, ids)
	require.NoError(t, r.sdk.Close(context.Background()))
	r.global.RequireNone(t)
	assert.Len(t, r.global.Calls(), 7)
	assert.Empty(t, r.errs.all())
}

// A producer disabled in the config is neither recovered nor reported, though the account
// has it and its alives arrive: its alive is counted and ignored.
func TestSDKDisabledProducerIsNotRecoveredNorReported(t *testing.T) {
	r, err := newProducersRig(t, recovery.Config{DisabledProducers: []int{3}}, feedtest.DefaultAccessToken, nil)
	require.NoError(t, err)
	assert.Equal(t, "producer 1 down (InitialState)", r.global.RequireNext(t).String())
	assert.Equal(t, "connection up on session 0 (all messages)", r.global.RequireNext(t).String())
	require.NoError(t, r.sim.SendAlive(t.Context(), 3, true)) // before LO's, on the same queue
	r.recover(t, 1)
	reqs := r.sim.RecoveryRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, 1, reqs[0].Producer)
	assert.Equal(t, uint64(1), r.sdk.Stats().Recovery.DisabledProducer)
	assert.Len(t, r.sdk.Producers(), 1)
	require.NoError(t, r.sdk.Close(context.Background()))
	r.global.RequireNone(t)
	assert.Len(t, r.global.Calls(), 4)
}

// When the API cannot list the producers, the SDK follows the fixed list, and says so.
func TestSDKFallsBackToTheFixedProducersWhenTheAPIFails(t *testing.T) {
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	failing := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path == "/v1/descriptions/producers.xml" {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, req)
		})
	}
	r, err := newProducersRig(t, recovery.Config{Producers: []feed.Producer{lo}}, feedtest.DefaultAccessToken, failing)
	require.NoError(t, err)
	assert.Equal(t, "producer 1 down (InitialState)", r.global.RequireNext(t).String())
	errs := r.errs.all()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], feed.ErrServerError)
	assert.ErrorContains(t, errs[0], "following Config.Producers instead")
	assert.Equal(t, "connection up on session 0 (all messages)", r.global.RequireNext(t).String())
	r.recover(t, 1)
}

// A token the API refuses fails Open, saying so; nothing was opened.
func TestSDKOpenFailsWhenTheAPIRefusesTheToken(t *testing.T) {
	r, err := newProducersRig(t, recovery.Config{}, "not-the-token", nil)
	require.ErrorIs(t, err, feed.ErrUnauthorized)
	assert.ErrorContains(t, err, "refused the access token (Config.API.AccessToken)")
	assert.Empty(t, r.global.Calls())
}
