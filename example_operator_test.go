package feedkit_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/markets"
	"github.com/feedkit/feedkit/recovery"
)

// settlements logs every settled market line by name.
type settlements struct {
	feed.BaseOddsFeedListener
	names *markets.Names
}

func (s *settlements) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	for _, mk := range m.Markets {
		name, err := s.names.MarketName(ctx, "en", m.Event, mk.ID, mk.Specifiers)
		if err != nil {
			return err // reported to OnError; the recovery point holds before the message
		}
		log.Printf("%s settled: %s", m.Event, name)
	}
	return nil
}

// An operator's program, as README.md shows it: the SDK set up from an access token on
// Sportradar's integration environment, producer records kept in a file, a listener that
// names what it settles, and a graceful Close on SIGINT or SIGTERM.
func Example_operator() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &feedkit.Integration,
		AccessToken: os.Getenv("FEED_ACCESS_TOKEN"),
		Node:        feed.Node(1),
		Concurrent:  &concurrent.Config{Threads: 8},
		Recovery:    recovery.Config{Store: recovery.NewFileStore("/var/lib/oddsfeed/producers.json")},
		OnError:     func(err error) { log.Print(err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := sdk.AddSession(feed.AllMessages, &settlements{names: sdk.Names()}); err != nil {
		log.Fatal(err)
	}
	if err := sdk.Open(ctx); err != nil {
		log.Fatal(err)
	}
	<-ctx.Done()
	// Close delivers what was read and saves each producer's recovery point.
	closing, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sdk.Close(closing); err != nil {
		log.Print(err)
	}
}
