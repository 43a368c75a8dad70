package feedapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// A client of the simulator's API, whose OnResponse hook sees every raw answer: what a
// host logs or records. The endpoint names a request with its ids left out, for logs and
// metrics; the token travels in a header and shows nowhere.
func ExampleNewClient() {
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, _ := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{BookmakerID: 42, VirtualHost: "/unifiedfeed/42"}))
	defer api.Close()

	client, err := feedapi.NewClient(feedapi.Config{
		BaseURL:     api.URL,
		AccessToken: feedtest.DefaultAccessToken,
		OnResponse: func(r feedapi.Response) {
			fmt.Println(r.Method, r.Endpoint, r.StatusCode, len(r.Body) > 0)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := client.WhoAmI(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("bookmaker", d.BookmakerID, "virtual host", d.VirtualHost)
	producers, _ := client.Producers(context.Background())
	fmt.Println("active producers:", len(producers))
	fmt.Printf("%+v\n", client.Stats())
	// Output:
	// GET /v1/users/whoami.xml 200 true
	// bookmaker 42 virtual host /unifiedfeed/42
	// GET /v1/descriptions/producers.xml 200 true
	// active producers: 1
	// {Requests:2 Failures:0 Retries:0 Held:0}
}
