package sportdata_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata"
)

// A Provider reads an event's fixture in English and German and holds both: here from
// the simulator's API, in a program from the SDK (SDK.SportData) or a feedapi.Client of
// the real API.
func ExampleProvider() {
	ctx := context.Background()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC))
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 1, Rate: feedtest.Unlimited, Clock: clk, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := sim.Publish(ctx, 1); err != nil { // the feed speaks of a match
		log.Fatal(err)
	}
	srv := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	defer srv.Close()
	api, err := feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: feedtest.DefaultAccessToken})
	if err != nil {
		log.Fatal(err)
	}

	sport, err := sportdata.New(api, sportdata.Config{Languages: []string{"en", "de"}, Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	match := sim.Sent()[0].Key.Event
	f, err := sport.Fixture(ctx, match)
	if err != nil {
		log.Fatal(err)
	}
	home, _ := f.Event.Home()
	away, _ := f.Event.Away()
	fmt.Printf("%s v %s, %s\n", home.Name.In("en"), away.Name.In("en"), f.Event.Scheduled.Format(time.RFC3339))
	fmt.Println(f.Event.Tournament.Name.In("en"), "/", f.Event.Tournament.Name.In("de"))

	// A new process starts warm from an export: no request to the API.
	var export bytes.Buffer
	if err := sport.Export(&export); err != nil {
		log.Fatal(err)
	}
	next, _ := sportdata.New(api, sportdata.Config{Languages: []string{"en", "de"}, Clock: clk})
	if _, err := next.Import(&export); err != nil {
		log.Fatal(err)
	}
	if _, err := next.Fixture(ctx, match); err != nil {
		log.Fatal(err)
	}
	fmt.Println("fixture requests:", sim.APIRequests(feedtest.RouteFixture))
	// Output:
	// Elmstead Swifts v Stonegate Albion, 2026-11-29T19:00:00Z
	// Simulated League / Simulierte Liga
	// fixture requests: 2
}
