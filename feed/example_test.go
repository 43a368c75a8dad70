package feed_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

func ExampleParseRoutingKey() {
	k, err := feed.ParseRoutingKey("hi.-.live.odds_change.1.sr:match.1234.-")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.Type, k.Event, k.Live, k.Priority)

	_, err = feed.ParseRoutingKey("hi.-.live.odds_change.football.sr:match.1234.-")
	fmt.Println(err)
	// Output:
	// odds_change sr:match:1234 true hi
	// feed: routing key "hi.-.live.odds_change.football.sr:match.1234.-": segment 5 (sport) "football": want a positive integer or "-"
}

func ExampleDecodeOddsChange() {
	body := []byte(`<odds_change product="1" event_id="sr:match:1234" timestamp="1764152400000">
  <odds>
    <market id="18" specifiers="total=2.5">
      <outcome id="12" odds="1.85" active="1"/>
      <outcome id="13" active="0"/>
    </market>
  </odds>
</odds_change>`)
	m, err := feed.DecodeOddsChange(body)
	if err != nil {
		log.Fatal(err)
	}
	total, _ := m.Markets[0].Specifiers.Get("total")
	fmt.Println(m.Event, m.Timestamp.Format(time.RFC3339), "total", total)
	for _, o := range m.Markets[0].Outcomes {
		if !o.HasOdds { // the feed left odds out: Odds reads 0, which is no price
			fmt.Println(o.ID, "not priced")
			continue
		}
		fmt.Println(o.ID, o.Odds)
	}
	// Output:
	// sr:match:1234 2025-11-26T10:20:00Z total 2.5
	// 12 1.85
	// 13 not priced
}

// A settlement's factors are neutral when the feed leaves them out (DeadHeatFactor 1,
// VoidFactor 0), so one formula pays every outcome.
func ExampleDecodeBetSettlement() {
	body := []byte(`<bet_settlement product="3" event_id="sr:match:1234" timestamp="1764159600000" certainty="2">
  <outcomes>
    <market id="40" specifiers="goalnr=1">
      <outcome id="sr:player:1" result="1" dead_heat_factor="0.5"/>
      <outcome id="sr:player:2" result="1"/>
      <outcome id="sr:player:3" result="0" void_factor="0.5"/>
    </market>
  </outcomes>
</bet_settlement>`)
	m, err := feed.DecodeBetSettlement(body)
	if err != nil {
		log.Fatal(err)
	}
	const stake, odds = 10.0, 4.0
	for _, o := range m.Markets[0].Outcomes {
		payout := stake * o.VoidFactor
		if o.Result == feed.ResultWon {
			payout += stake * (1 - o.VoidFactor) * odds * o.DeadHeatFactor
		}
		fmt.Println(o.ID, payout)
	}
	// Output:
	// sr:player:1 20
	// sr:player:2 40
	// sr:player:3 5
}

func ExamplePeek() {
	p, err := feed.Peek([]byte(`<odds_change product="3" event_id="sr:match:1" timestamp="1" request_id="42"><odds>...`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Type, p.Producer, p.RequestID)
	// Output: odds_change 3 42
}

// oddsPrinter prints the odds changes it receives; BaseOddsFeedListener ignores the rest.
type oddsPrinter struct {
	feed.BaseOddsFeedListener
	done chan struct{}
}

func (p oddsPrinter) OnOddsChange(_ context.Context, m *feed.OddsChange) error {
	fmt.Printf("odds change for %s: %d market(s)\n", m.Event, len(m.Markets))
	close(p.done)
	return nil
}

// A session on the embedded broker: the same code consumes from RabbitMQ with the AMQP
// transport.
func ExampleNewSession() {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()

	listener := oddsPrinter{done: make(chan struct{})}
	session, err := feed.NewSession(broker, feed.SessionConfig{
		Interest: feed.LiveMessagesOnly,
		Listener: listener,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := session.Open(ctx); err != nil {
		log.Fatal(err)
	}
	defer session.Close(ctx)

	msg := &feed.OddsChange{
		Header:  feed.Header{Producer: 1, Event: feed.MustParseURN("sr:match:1234"), Timestamp: time.Now()},
		Markets: []feed.OddsMarket{{ID: 1, Status: feed.MarketActive}},
	}
	if err := broker.Publish(ctx, "hi.-.live.odds_change.1.sr:match.1234.-", feedtest.Marshal(msg)); err != nil {
		log.Fatal(err)
	}
	<-listener.done
	// Output: odds change for sr:match:1234: 1 market(s)
}
