package rabbitmq_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

// betStopLogger prints the bet stops it receives; BaseOddsFeedListener ignores the rest.
type betStopLogger struct {
	feed.BaseOddsFeedListener
}

func (betStopLogger) OnBetStop(_ context.Context, m *feed.BetStop) error {
	fmt.Println("bet stop for", m.Event)
	return nil
}

// A transport for the Unified Odds Feed: TLS on port 5671, the access token as login
// and the bookmaker's virtual host. New only checks the configuration; the session's
// Open connects, and the session's binding keys become the queue's bindings.
func ExampleNew() {
	transport, err := rabbitmq.New(rabbitmq.Config{
		URL:         "amqps://stgmq.betradar.com:5671",
		AccessToken: "your-access-token",
		VirtualHost: "/unifiedfeed/12345",
		OnError:     func(err error) { log.Printf("feed: %v", err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	session, err := feed.NewSession(transport, feed.SessionConfig{
		Interest: feed.LiveMessagesOnly,
		Listener: betStopLogger{},
	})
	if err != nil {
		log.Fatal(err)
	}
	// session.Open(ctx) would connect now, and session.Close(ctx) end the subscription.
	fmt.Println("transport and session configured; connections so far:", transport.Stats().Connects)
	for _, key := range session.BindingKeys() {
		fmt.Println(key)
	}
	// Output:
	// transport and session configured; connections so far: 0
	// *.*.live.*.*.*.*
	// *.*.live.*.*.*.*.-
	// -.-.-.alive.-.-.-
	// -.-.-.alive.-.-.-.-
	// -.-.-.snapshot_complete.-.-.-
	// -.-.-.snapshot_complete.-.-.-.-
}

// A wrong configuration is refused before any connection, with the name of the field at
// fault. A URL that cannot be parsed is reported without the URL, which may hold a
// password.
func ExampleNew_badConfig() {
	_, err := rabbitmq.New(rabbitmq.Config{URL: "amqps://stgmq.betradar.com:5671", Prefetch: 100_000})
	fmt.Println(err)

	_, err = rabbitmq.New(rabbitmq.Config{URL: "amqp://localhost:5672", InsecureSkipVerify: true})
	fmt.Println(err)

	_, err = rabbitmq.New(rabbitmq.Config{URL: "amqp://user:s3cret@localhost:5672/%zz"})
	fmt.Println(err)
	// Output:
	// rabbitmq.Config.Prefetch 100000 exceeds AMQP's limit of 65535
	// rabbitmq.Config.InsecureSkipVerify is set but URL's scheme is amqp, not amqps
	// rabbitmq.Config.URL: not an amqp:// or amqps:// URL: it does not parse (reserved characters in the user name or password, such as / ? # @ :, must be percent-encoded)
}

// A Publisher feeds a broker of your own with the simulator's traffic, for a session on
// a rabbitmq.Transport to consume. (This example needs a running broker.)
func ExampleNewPublisher() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pub, err := rabbitmq.NewPublisher(ctx, rabbitmq.Config{
		URL:             "amqp://guest:guest@localhost:5672/",
		DeclareExchange: true, // a broker of your own has no unifiedfeed exchange yet
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close(ctx)

	sim, err := feedtest.NewSimulator(pub, feedtest.SimulatorConfig{Matches: 10, Rate: feedtest.Unlimited, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := sim.Publish(ctx, 1000); err != nil {
		log.Fatal(err)
	}
	// Flush returns once the broker has confirmed every message.
	if err := pub.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("published", sim.Stats().Events, "event messages")
}
