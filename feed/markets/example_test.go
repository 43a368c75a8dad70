package markets_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/markets"
)

// Names through the simulator's Sports API, as through the feed's own: a market line of
// match sr:match:1000001 and its outcomes, in English and German. (With an SDK, take
// SDK.Names instead of making one.)
func ExampleNames() {
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), feedtest.SimulatorConfig{Matches: 1, Rate: feedtest.Unlimited})
	if err != nil {
		panic(err)
	}
	if err := sim.Publish(context.Background(), 1); err != nil { // the match begins
		panic(err)
	}
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	defer api.Close()
	client, err := feedapi.NewClient(feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken})
	if err != nil {
		panic(err)
	}
	names, err := markets.New(client, markets.Config{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	match := feed.MustParseURN("sr:match:1000001")
	for _, lang := range []string{"en", "de"} {
		market, _ := names.MarketName(ctx, lang, match, 18, "total=2.5")
		over, _ := names.OutcomeName(ctx, lang, match, 18, "total=2.5", "12")
		home, err := names.OutcomeName(ctx, lang, match, 16, "hcp=-1.5", "1714")
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s — %s; %s\n", lang, market, over, home)
	}
	st := names.Stats()
	fmt.Println("descriptions read:", st.Markets.Fetches, "summaries read:", st.Summaries.Fetches)
	// Output:
	// en: Total — over 2.5; Elmstead Swifts (-1.5)
	// de: Total — über 2.5; Elmstead Swifts (-1.5)
	// descriptions read: 2 summaries read: 2
}
