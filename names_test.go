package feedkit_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// namedOutcome is a name a listener took for an outcome the feed sent.
type namedOutcome struct {
	market  int
	specs   feed.Specifiers
	outcome string
	name    string
	err     error
}

// A listener names every market line and outcome the feed sends, in English and German,
// with the SDK's Names: the simulator's API describes every market of its traffic, so
// every name is found; each language's descriptions are read once for all messages.
func TestListenerBuiltAfterNewNamesMarketsAndOutcomes(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(envEpoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 5, Rate: feedtest.Unlimited, Clock: clk})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", api.URL)

	// The listener is made after New, with what New built: no two-step wiring.
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: feedtest.DefaultAccessToken,
		Transport: broker, Node: feed.Node(1),
		Clock: clk,
	})
	require.NoError(t, err)
	names := sdk.Names()
	require.NotNil(t, names)
	var mu sync.Mutex
	var named []namedOutcome
	name := func(ctx context.Context, event feed.URN, id int, specs feed.Specifiers, outcomes []string) {
		for _, lang := range []string{"en", "de"} {
			market, err := names.MarketName(ctx, lang, event, id, specs)
			mu.Lock()
			named = append(named, namedOutcome{market: id, specs: specs, name: market, err: err})
			mu.Unlock()
			for _, o := range outcomes {
				got, err := names.OutcomeName(ctx, lang, event, id, specs, o)
				mu.Lock()
				named = append(named, namedOutcome{market: id, specs: specs, outcome: o, name: got, err: err})
				mu.Unlock()
			}
		}
	}
	rec := feedtest.NewRecorder()
	rec.Hook = func(m feed.Message) error {
		ctx := context.Background()
		switch m := m.(type) {
		case *feed.OddsChange:
			for _, mk := range m.Markets {
				var ids []string
				for _, o := range mk.Outcomes {
					ids = append(ids, o.ID)
				}
				name(ctx, m.Event, mk.ID, mk.Specifiers, ids)
			}
		case *feed.BetSettlement:
			for _, mk := range m.Markets {
				var ids []string
				for _, o := range mk.Outcomes {
					ids = append(ids, o.ID)
				}
				name(ctx, m.Event, mk.ID, mk.Specifiers, ids)
			}
		}
		return nil
	}
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	require.NoError(t, sdk.Open(t.Context()))

	const messages = 300
	require.NoError(t, sim.Publish(t.Context(), messages))
	require.NoError(t, rec.Wait(t.Context(), messages))

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, named)
	totals := 0
	for _, n := range named {
		require.NoError(t, n.err, "market %d %s outcome %q", n.market, n.specs, n.outcome)
		require.NotEmpty(t, n.name)
		assert.NotContains(t, n.name, "{", "market %d %s outcome %q: a template left unrendered", n.market, n.specs, n.outcome)
		if n.market == 18 && n.outcome == "12" {
			total, _ := n.specs.Get("total")
			assert.True(t, n.name == "over "+total || n.name == "über "+total, "market 18 outcome 12 named %q", n.name)
			totals++
		}
	}
	assert.Positive(t, totals, "the traffic has totals, named in both languages")
	assert.Equal(t, 2, sim.APIRequests(feedtest.RouteMarketDescriptions), "one request per language")
	st := sdk.Names().Stats()
	assert.Equal(t, int64(2), st.Markets.Fetches, "one fetch per language")
	assert.Zero(t, st.Markets.Errors+st.Summaries.Errors+st.Profiles.Errors)
}
