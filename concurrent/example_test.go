package concurrent_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// e2eMatchLog is a customer's OddsFeedListener that notes, per match, the messages it
// receives. The concurrent listener calls it from several workers at once, so it locks.
type e2eMatchLog struct {
	feed.BaseOddsFeedListener
	mu  sync.Mutex
	log map[feed.URN][]string
}

func (l *e2eMatchLog) note(m feed.Message) error {
	h := m.MessageHeader()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		l.log = map[feed.URN][]string{}
	}
	l.log[h.Event] = append(l.log[h.Event], fmt.Sprintf("%s@%d", m.Type(), h.Timestamp.Unix()))
	return nil
}

func (l *e2eMatchLog) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return l.note(m) }
func (l *e2eMatchLog) OnBetStop(_ context.Context, m *feed.BetStop) error       { return l.note(m) }

// print prints what each match received, in order, the matches sorted.
func (l *e2eMatchLog) print() {
	l.mu.Lock()
	defer l.mu.Unlock()
	e2ePrintByMatch(l.log)
}

func e2ePrintByMatch(byMatch map[feed.URN][]string) {
	events := make([]feed.URN, 0, len(byMatch))
	for event := range byMatch {
		events = append(events, event)
	}
	slices.SortFunc(events, func(a, b feed.URN) int { return strings.Compare(a.String(), b.String()) })
	for _, event := range events {
		fmt.Printf("%s: %s\n", event, strings.Join(byMatch[event], " "))
	}
}

// Decoded messages of two matches, interleaved, go to the customer's listener on four
// workers: the two matches in parallel, each one's messages in the order they were given.
func ExampleNewDispatcher() {
	customer := &e2eMatchLog{}
	tracker := concurrent.NewTaskLifecycleTracker()
	odds, err := concurrent.NewDispatcher(customer, tracker, concurrent.Config{Threads: 4})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	a, b := feed.MustParseURN("sr:match:1"), feed.MustParseURN("sr:match:2")
	header := func(event feed.URN, sec int64) feed.Header {
		return feed.Header{Producer: 1, Event: event, Timestamp: time.Unix(sec, 0).UTC()}
	}
	for _, err := range []error{
		odds.OnOddsChange(ctx, &feed.OddsChange{Header: header(a, 1)}),
		odds.OnOddsChange(ctx, &feed.OddsChange{Header: header(b, 1)}),
		odds.OnBetStop(ctx, &feed.BetStop{Header: header(a, 2)}),
		odds.OnOddsChange(ctx, &feed.OddsChange{Header: header(b, 2)}),
		odds.OnOddsChange(ctx, &feed.OddsChange{Header: header(a, 3)}),
		odds.OnBetStop(ctx, &feed.BetStop{Header: header(b, 3)}),
	} {
		if err != nil { // only after Close, or when ctx ends while the queue is full
			log.Fatal(err)
		}
	}

	// Close delivers what is queued before it returns.
	if err := odds.Close(ctx); err != nil {
		log.Fatal(err)
	}
	customer.print()
	st := odds.Stats()
	fmt.Println("dispatched", st.Dispatched, "completed", st.Completed)
	// Output:
	// sr:match:1: odds_change@1 bet_stop@2 odds_change@3
	// sr:match:2: odds_change@1 odds_change@2 bet_stop@3
	// dispatched 6 completed 6
}

// Two sessions' listeners share one pool of two workers: a match's messages, given in
// turn to the live and the prematch listener, reach each customer listener in the order
// they were given, and each listener counts its own tasks while the pool counts them all.
func ExamplePool() {
	tracker := concurrent.NewTaskLifecycleTracker()
	pool, err := concurrent.NewPool(tracker, concurrent.Config{Threads: 2}) // 2 workers for both sessions
	if err != nil {
		log.Fatal(err)
	}
	liveLog, prematchLog := &e2eMatchLog{}, &e2eMatchLog{}
	live, err := pool.Dispatcher(liveLog)
	if err != nil {
		log.Fatal(err)
	}
	prematch, err := pool.Dispatcher(prematchLog)
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	match := feed.MustParseURN("sr:match:1")
	header := func(sec int64) feed.Header {
		return feed.Header{Producer: 1, Event: match, Timestamp: time.Unix(sec, 0).UTC()}
	}
	for _, err := range []error{
		live.OnOddsChange(ctx, &feed.OddsChange{Header: header(1)}),
		prematch.OnOddsChange(ctx, &feed.OddsChange{Header: header(2)}),
		live.OnBetStop(ctx, &feed.BetStop{Header: header(3)}),
	} {
		if err != nil {
			log.Fatal(err)
		}
	}

	// Each listener's Close delivers its own tasks; the pool closes after them.
	for _, err := range []error{live.Close(ctx), prematch.Close(ctx), pool.Close(ctx)} {
		if err != nil {
			log.Fatal(err)
		}
	}
	liveLog.print()
	prematchLog.print()
	fmt.Println("live", live.Stats().Completed, "prematch", prematch.Stats().Completed,
		"pool", pool.Stats().Completed, "on", len(pool.Stats().Workers), "workers")
	// Output:
	// sr:match:1: odds_change@1 bet_stop@3
	// sr:match:1: odds_change@2
	// live 2 prematch 1 pool 3 on 2 workers
}

// A producer's up status is held back until the customer's odds listener has processed
// every message of the recovery behind it. Here the tracker is driven by hand: one task of
// the recovery is pending when the up arrives.
func ExampleStatusGate() {
	tracker := concurrent.NewTaskLifecycleTracker()
	customer := feedtest.NewGlobalRecorder() // records each call it receives
	global, err := concurrent.NewStatusGate(customer, tracker, concurrent.GateConfig{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang
	defer cancel()
	heard := func() feedtest.GlobalCall {
		c, err := customer.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		return c
	}

	global.OnRecoveryInitiated(ctx, feed.RecoveryInitiated{Producer: 1, RequestID: 42})
	fmt.Println("customer:", heard())

	// A replayed message of request 42 is queued, and a worker starts on it: what an
	// Dispatcher sharing the tracker does for each message.
	rc := concurrent.RecoveryContext{Producer: 1, RequestID: 42}
	ticket := tracker.Allocate(rc)
	ticket.Start()

	global.OnProducerStatusChange(ctx, feed.ProducerStatus{Producer: 1, Reason: feed.FirstRecoveryCompleted})
	fmt.Println("held back:", global.Stats().Held, "pending:", tracker.Pending(rc))

	ticket.Complete() // the customer's listener is done with the message
	fmt.Println("customer:", heard())

	if err := global.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// customer: recovery #42 of producer 1 initiated
	// held back: 1 pending: 1
	// customer: producer 1 up (FirstRecoveryCompleted)
}

// The wiring into a session: the Dispatcher is the session's Dispatcher, the
// StatusGate its Global, sharing one tracker. Here the session consumes from the
// embedded broker; with RabbitMQ only the transport differs.
func ExampleNewDispatcher_session() {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	defer broker.Close()

	tracker := concurrent.NewTaskLifecycleTracker()
	customer := feedtest.NewRecorder() // the customer's OddsFeedListener
	odds, err := concurrent.NewDispatcher(customer, tracker, concurrent.Config{Threads: 8})
	if err != nil {
		log.Fatal(err)
	}
	global, err := concurrent.NewStatusGate(feed.BaseGlobalEventsListener{}, tracker, concurrent.GateConfig{})
	if err != nil {
		log.Fatal(err)
	}
	session, err := feed.NewSession(broker, feed.SessionConfig{Dispatcher: odds, Global: global})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := session.Open(ctx); err != nil {
		log.Fatal(err)
	}

	publish := func(m feed.Message) {
		h := m.MessageHeader()
		key := feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: m.Type(), SportID: 1, Event: h.Event}
		if err := broker.Publish(ctx, key.String(), feedtest.Marshal(m)); err != nil {
			log.Fatal(err)
		}
	}
	a, b := feed.MustParseURN("sr:match:1"), feed.MustParseURN("sr:match:2")
	header := func(event feed.URN, sec int64) feed.Header {
		return feed.Header{Producer: 1, Event: event, Timestamp: time.Unix(sec, 0).UTC()}
	}
	publish(&feed.OddsChange{Header: header(a, 1)})
	publish(&feed.OddsChange{Header: header(b, 1)})
	publish(&feed.BetStop{Header: header(a, 2), Groups: "all"})
	publish(&feed.OddsChange{Header: header(b, 2)})
	if err := customer.Wait(ctx, 4); err != nil {
		log.Fatal(err)
	}

	// Closing the session closes its Dispatcher; the StatusGate is closed apart.
	if err := session.Close(ctx); err != nil {
		log.Fatal(err)
	}
	if err := global.Close(ctx); err != nil {
		log.Fatal(err)
	}
	got := map[feed.URN][]string{}
	for event, msgs := range customer.ByEvent() {
		for _, m := range msgs {
			got[event] = append(got[event], fmt.Sprintf("%s@%d", m.Type(), m.MessageHeader().Timestamp.Unix()))
		}
	}
	e2ePrintByMatch(got)
	fmt.Println("pending live tasks:", tracker.Pending(concurrent.RecoveryContext{Producer: 1}))
	// Output:
	// sr:match:1: odds_change@1 bet_stop@2
	// sr:match:2: odds_change@1 odds_change@2
	// pending live tasks: 0
}
