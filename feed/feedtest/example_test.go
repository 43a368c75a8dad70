package feedtest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// betStops is an OddsFeedListener that hands the bet stops it receives to a channel and
// ignores everything else.
type betStops struct {
	feed.BaseOddsFeedListener
	ch chan *feed.BetStop
}

func (l betStops) OnBetStop(_ context.Context, m *feed.BetStop) error {
	l.ch <- m
	return nil
}

// A session consumes from an in-process Broker as it would from RabbitMQ: publish a
// message with its routing key, and the session's listener receives it decoded.
func ExampleNewBroker() {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()

	listener := betStops{ch: make(chan *feed.BetStop, 1)}
	session, err := feed.NewSession(broker, feed.SessionConfig{Interest: feed.LiveMessagesOnly, Listener: listener})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := session.Open(ctx); err != nil {
		panic(err)
	}
	defer session.Close(ctx)

	match := feed.MustParseURN("sr:match:1234")
	key := feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: feed.MessageBetStop, SportID: 1, Event: match}
	body := feedtest.Marshal(&feed.BetStop{
		Header: feed.Header{Producer: 1, Event: match, Timestamp: time.UnixMilli(1764152400000).UTC()},
		Groups: "all", MarketStatus: feed.MarketSuspended,
	})
	if err := broker.Publish(ctx, key.String(), body); err != nil {
		panic(err)
	}

	m := <-listener.ch
	fmt.Println(key)
	fmt.Println(m.Event, m.Groups, m.MarketStatus, m.Timestamp.Format(time.RFC3339Nano))
	// Output:
	// hi.-.live.bet_stop.1.sr:match.1234.-
	// sr:match:1234 all suspended 2025-11-26T10:20:00Z
}

// Marshal writes a message as the feed sends it, which is how tests build message bodies.
func ExampleMarshal() {
	fmt.Println(string(feedtest.Marshal(&feed.Alive{
		Header:     feed.Header{Producer: 1, Timestamp: time.UnixMilli(1764152405000).UTC()},
		Subscribed: true,
	})))
	fmt.Println(string(feedtest.Marshal(&feed.BetSettlement{
		Header:    feed.Header{Producer: 3, Event: feed.MustParseURN("sr:match:1234"), Timestamp: time.UnixMilli(1764159600000).UTC(), RequestID: 42},
		Certainty: 2,
		Markets: []feed.SettledMarket{{ID: 18, Specifiers: "total=2.5", Outcomes: []feed.SettledOutcome{
			{ID: "12", Result: feed.ResultWon, DeadHeatFactor: 0.5}, // a dead heat of two
			{ID: "13", Result: feed.ResultLost, VoidFactor: 0.5, DeadHeatFactor: 1},
		}}},
	})))
	// Output:
	// <alive product="1" timestamp="1764152405000" subscribed="1"/>
	// <bet_settlement product="3" event_id="sr:match:1234" timestamp="1764159600000" request_id="42" certainty="2"><outcomes><market id="18" specifiers="total=2.5"><outcome id="12" result="1" dead_heat_factor="0.5"/><outcome id="13" result="0" void_factor="0.5"/></market></outcomes></bet_settlement>
}

// A GlobalRecorder as a session's GlobalEventsListener: the test reads the calls in the
// order they came, waiting for each, and checks that nothing else came.
func ExampleGlobalRecorder() {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()

	global := feedtest.NewGlobalRecorder()
	session, err := feed.NewSession(broker, feed.SessionConfig{Listener: feedtest.NewRecorder(), Global: global})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang
	defer cancel()
	if err := session.Open(ctx); err != nil {
		panic(err)
	}
	defer session.Close(context.Background())

	next := func() {
		c, err := global.Next(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(c)
	}
	next() // the session is bound: the broker can drop it now
	broker.Disconnect(errors.New("broker restarted"))
	next()
	broker.Reconnect()
	next()
	fmt.Println("unread:", len(global.Unread()))
	// Output:
	// connection up on session 0 (all messages)
	// connection down on session 0 (all messages): broker restarted
	// connection up on session 0 (all messages)
	// unread: 0
}
