package promfeedkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// The metrics of an SDK, served for Prometheus to scrape: New registers them, the SDK
// tells them what happens (Config.Observer), and WatchSDK adds the levels its Stats
// hold. Here the SDK runs on the embedded broker; on the feed, set Config.Environment
// and Config.AccessToken instead of Transport.
func ExampleNew() {
	reg := prometheus.NewRegistry()
	m, err := promfeedkit.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}

	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, _ := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	sdk, err := feedkit.New(feedkit.Config{
		Transport: broker,
		Recovery:  recovery.Config{Producers: []feed.Producer{lo}, Disabled: true},
		Observer:  m, // handed to every part of the SDK
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.WatchSDK(sdk); err != nil {
		fmt.Println(err)
		return
	}
	if err := sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()); err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := sdk.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer sdk.Close(ctx)

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	scrape := func(metric string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		for line := range strings.Lines(w.Body.String()) {
			if strings.HasPrefix(line, metric+"{") {
				fmt.Print(line)
			}
		}
	}
	scrape("feedkit_producer_up")
	_ = sim.SendAlive(ctx, lo.ID, true) // with recoveries disabled, the producer's alive brings it up
	_ = broker.Flush(ctx)
	_ = sdk.Flush(ctx)
	scrape("feedkit_producer_up")
	// Output:
	// feedkit_producer_up{feedkit_producer="1"} 0
	// feedkit_producer_up{feedkit_producer="1"} 1
}
