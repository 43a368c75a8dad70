package feedkit_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// announcer prints the producer status changes it hears of.
type announcer struct {
	feed.BaseGlobalEventsListener
	up chan struct{}
}

func (a *announcer) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	fmt.Printf("producer %d down=%v (%s)\n", s.Producer, s.Down, s.Reason)
	if !s.Down {
		a.up <- struct{}{}
	}
}

// An SDK on the embedded broker, with the simulator's recovery API: the producer's first
// alive brings a recovery, and its up once the recovery's messages are processed. On
// RabbitMQ, set Config.AMQP (or a rabbitmq.Transport) and the feed's API instead.
func ExampleNew() {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, _ := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}})
	api := httptest.NewServer(sim.RecoveryHandler())
	defer api.Close()

	global := &announcer{up: make(chan struct{}, 1)}
	sdk, err := feedkit.New(feedkit.Config{
		Transport:  broker,
		Node:       feed.Node(1),
		Global:     global,
		API:        feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
		Recovery:   recovery.Config{Producers: []feed.Producer{lo}},
		Concurrent: &concurrent.Config{},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The listener of each session is added once the SDK is built: it may use what New
	// made, such as sdk.Names().
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

	_ = sim.SendAlive(ctx, lo.ID, true) // the feed's alive: the SDK recovers the producer
	select {
	case <-global.up:
	case <-time.After(time.Minute): // a guard against a hang
		fmt.Println("no up")
	}
	st, _ := sdk.Producer(lo.ID)
	fmt.Println("state:", st.State)
	// Output:
	// producer 1 down=true (InitialState)
	// producer 1 down=false (FirstRecoveryCompleted)
	// state: healthy
}
