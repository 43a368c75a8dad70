package feedkit_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata"
)

// A listener that reads the fixture of each fixture_change it is given reads the changed
// one: the session told the SDK's sport data of the change as the message arrived, so
// the fixture comes from fixture_change_fixture.xml, never from a cache of the old one.
// Every other message's event is read from the cache after the first read.
func TestSportDataFollowsTheFeedsFixtureChanges(t *testing.T) {
	f := newSimFeed(t, 5, 0)
	broker, sim, clk, env := f.broker, f.sim, f.clock, f.env
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Node: feed.Node(1), Clock: clk,
		SportData: sportdata.Config{Languages: []string{"en", "de"}},
	})
	require.NoError(t, err)
	sport := sdk.SportData()
	require.NotNil(t, sport)

	type read struct {
		change  *feed.FixtureChange
		fixture sportdata.Fixture
		err     error
	}
	var mu sync.Mutex
	var reads []read
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		fc, ok := m.(*feed.FixtureChange)
		if !ok {
			return nil
		}
		f, err := sport.Fixture(context.Background(), fc.Event)
		mu.Lock()
		reads = append(reads, read{fc, f, err})
		mu.Unlock()
		return nil
	}
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, sdk.Open(t.Context()))

	const messages = 400
	require.NoError(t, sim.Publish(t.Context(), messages))
	require.NoError(t, rec.Wait(t.Context(), messages))

	mu.Lock()
	defer mu.Unlock()
	changes := 0
	for _, s := range sim.Sent() {
		if s.Key.Type == feed.MessageFixtureChange && !s.Replay {
			changes++
		}
	}
	require.Positive(t, changes, "the traffic has fixture changes")
	require.Len(t, reads, changes, "every fixture_change reached the listener")
	for _, r := range reads {
		require.NoError(t, r.err)
		// A later change of the same match may have arrived before this one was
		// handled: the fixture is then that later one, never an earlier one.
		assert.False(t, r.fixture.StartTime.Before(r.change.StartTime.Truncate(time.Second)),
			"%s: fixture starts %v, the change said %v", r.change.Event, r.fixture.StartTime, r.change.StartTime)
		assert.Equal(t, "Simulierte Liga", r.fixture.Event.Tournament.Name.In("de"))
	}
	changed := sim.APIRequests(feedtest.RouteFixtureChangeFixture)
	assert.Positive(t, changed)
	assert.LessOrEqual(t, changed, 2*changes, "at most one read per change and language")
	assert.Zero(t, sim.APIRequests(feedtest.RouteFixture), "no fixture was read before its change")
	st := sdk.Stats().SportData
	require.NotNil(t, st)
	assert.Equal(t, int64(changed), st.Fixtures.Fetches, "every fixture read was of a change fixture")
	assert.Zero(t, st.Fixtures.Errors)
}

// simFeed is a simulator of producer 1 on the embedded broker, with its API served, on
// a fake clock: the feed the SDK tests of the sport data and the recordings run on.
type simFeed struct {
	broker *feedtest.Broker
	sim    *feedtest.Simulator
	clock  *clocktest.Fake
	env    feedkit.Environment // the simulator's API, as a custom environment
	api    string              // its URL
}

func newSimFeed(t *testing.T, matches int, seed uint64) *simFeed {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(envEpoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: matches, Rate: feedtest.Unlimited, Clock: clk, Seed: seed})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	return &simFeed{broker: broker, sim: sim, clock: clk, env: feedkit.CustomEnvironment("", api.URL), api: api.URL}
}
