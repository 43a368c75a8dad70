package otelfeedkit_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// The metrics of an SDK, on a MeterProvider read by hand. A host would give the
// provider its exporter's reader (Prometheus, OTLP) instead of a ManualReader.
func ExampleNew() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	m, err := otelfeedkit.New(otelfeedkit.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}

	// The SDK tells m what happens; WatchSDK reads its levels at each collection.
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sdk, err := feedkit.New(feedkit.Config{
		Transport: broker,
		Recovery:  recovery.Config{Producers: []feed.Producer{lo}, Disabled: true},
		Observer:  m,
	})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := m.WatchSDK(sdk)
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = reg.Unregister() }()

	// What the SDK's parts would tell m as messages come, called here by hand.
	live := feed.SessionRef{Index: 0, Interest: feed.LiveMessagesOnly}
	for range 3 {
		m.FeedMessageReceived(live, 1, feed.MessageOddsChange, 1024)
		m.ListenerCalled(concurrent.Call{Pool: "feed", Producer: 1, Type: feed.MessageOddsChange, Result: concurrent.CallReturned})
	}
	m.ProducerStatusChanged(feed.ProducerStatus{Producer: 1, Down: true, Reason: feed.InitialState})

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			add := func(set attribute.Set, v int64) {
				lines = append(lines, fmt.Sprintf("%s{%s} %d", md.Name, set.Encoded(attribute.DefaultEncoder()), v))
			}
			switch d := md.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, p.Value)
				}
			}
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// feedkit.listener.calls{feedkit.message.type=odds_change,feedkit.pool=feed,feedkit.producer=1,feedkit.result=returned} 3
	// feedkit.producer.downs{feedkit.producer=1,feedkit.reason=InitialState} 1
	// feedkit.producer.last_down{feedkit.producer=1,feedkit.reason=InitialState} 1
	// feedkit.producer.up{feedkit.producer=1} 0
	// messaging.client.consumed.messages{feedkit.message.type=odds_change,feedkit.producer=1,feedkit.session=0:live,messaging.system=rabbitmq} 3
}
