package recovery_test

import (
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// requesterFunc adapts a function to recovery.Requester. In production the requester is
// a *feedapi.Client.
type requesterFunc func(ctx context.Context, p feed.Producer, after time.Time, requestID int64) error

func (f requesterFunc) InitiateRecovery(ctx context.Context, p feed.Producer, after time.Time, requestID int64) error {
	return f(ctx, p, after, requestID)
}

// statusPrinter is the SDK user's GlobalEventsListener: it prints what the manager tells.
type statusPrinter struct {
	feed.BaseGlobalEventsListener
	up chan<- struct{}
}

func (l statusPrinter) OnRecoveryInitiated(_ context.Context, ri feed.RecoveryInitiated) {
	fmt.Printf("recovery of producer %d initiated, replaying since %s\n", ri.Producer, ri.After.Format(time.TimeOnly))
}

func (l statusPrinter) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	fmt.Printf("producer %d down=%v (%s)\n", s.Producer, s.Down, s.Reason)
	if !s.Down {
		close(l.up)
	}
}

// A manager follows the live producer: its first alive asks for a recovery of the last ten
// minutes (nothing is known of what was missed), and the snapshot_complete of that request
// makes the producer healthy.
func ExampleManager() {
	live, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	requests := make(chan int64, 1)
	up := make(chan struct{})
	api := requesterFunc(func(_ context.Context, p feed.Producer, after time.Time, id int64) error {
		requests <- id // accepted
		return nil
	})
	// One session, and no node: the SDK's own wiring passes its node and its count of
	// sessions.
	m, err := recovery.NewManager(api, statusPrinter{up: up}, feed.NodeID{}, recovery.Config{
		Producers: []feed.Producer{live},
		// A fixed clock keeps the example's output stable; leave Clock nil for the wall clock.
		Clock: clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close(ctx)

	// The session hands the manager the system messages of the feed.
	alive, _ := feed.ParseRoutingKey("-.-.-.alive.-.-.-.-")
	m.HandleSystem(feed.Event{RawKey: alive.String(), Key: alive,
		Body: []byte(`<alive product="1" timestamp="1795262400000" subscribed="1"/>`)})

	id := <-requests
	snapshot, _ := feed.ParseRoutingKey("-.-.-.snapshot_complete.-.-.-.-")
	m.HandleSystem(feed.Event{RawKey: snapshot.String(), Key: snapshot,
		Body: fmt.Appendf(nil, `<snapshot_complete product="1" timestamp="1795262401000" request_id="%d"/>`, id)})

	<-up
	fmt.Println("producer 1 is", m.Producers()[0].State)
	// Output:
	// producer 1 down=true (InitialState)
	// recovery of producer 1 initiated, replaying since 11:50:00
	// producer 1 down=false (FirstRecoveryCompleted)
	// producer 1 is healthy
}

// A test of a rule, as a user writes one: the manager runs on a fake clock, and Flush
// waits until it has acted on what it was given and on the checks the clock's Advance made
// due, so the test reads the outcome without polling or sleeping. Here the live producer
// (a heartbeat limit of 15 s, checked every 15 s) falls silent: a silence of exactly the
// limit keeps it up, a longer one takes it down.
func ExampleManager_Flush() {
	live, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	// No recovery API (a nil Requester): with recoveries disabled a producer is up at its
	// first alive.
	m, err := recovery.NewManager(nil, statusPrinter{up: make(chan struct{})}, feed.NodeID{}, recovery.Config{
		Producers: []feed.Producer{live},
		Disabled:  true,
		Clock:     clk,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close(ctx)

	alive, _ := feed.ParseRoutingKey("-.-.-.alive.-.-.-.-")
	m.HandleSystem(feed.Event{RawKey: alive.String(), Key: alive,
		Body: fmt.Appendf(nil, `<alive product="1" timestamp="%d" subscribed="1"/>`, clk.Now().UnixMilli())})
	_ = m.Flush(ctx)
	for range 2 {
		clk.Advance(15 * time.Second) // a check
		_ = m.Flush(ctx)
		fmt.Println(clk.Now().Format(time.TimeOnly), "producer 1 is", m.Producers()[0].State)
	}
	// Output:
	// producer 1 down=true (InitialState)
	// producer 1 down=false (FirstRecoveryCompleted)
	// 12:00:15 producer 1 is healthy
	// producer 1 down=true (AliveIntervalViolation)
	// 12:00:30 producer 1 is disconnected
}
