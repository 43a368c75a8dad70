package recovery_test

import (
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/recovery"
)

// ruleLog is a test's GlobalEventsListener: it prints what the manager tells, and signals
// each recovery initiation, which the manager reports once the recovery API has accepted
// the request, on a goroutine of its own.
type ruleLog struct {
	feed.BaseGlobalEventsListener
	initiated chan<- struct{}
}

func (l ruleLog) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	fmt.Printf("producer %d down=%v (%s)\n", s.Producer, s.Down, s.Reason)
}

func (l ruleLog) OnRecoveryInitiated(_ context.Context, ri feed.RecoveryInitiated) {
	fmt.Printf("recovery of producer %d initiated from %s\n", ri.Producer, ri.After.Format(time.TimeOnly))
	l.initiated <- struct{}{}
}

// A recovery rule tested from outside the module, as a user tests their own: the live
// producer (a heartbeat limit of 15 s, checked every 15 s from Open) falls silent after
// its alive of 12:00:10. The check of 12:00:15 finds it within its limit, that of
// 12:00:30 past it: it goes down, and when its alives resume the recovery goes back to
// its recovery point, the alive of 12:00:10 that every message before it was processed
// through. The fake clock of clocktest moves time, and Flush waits until the manager has
// acted on what it was given and on the checks the clock made due: no polling, no sleep.
func ExampleManager_Flush_heartbeatLimit() {
	live, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	requests := make(chan int64, 1)
	api := requesterFunc(func(_ context.Context, _ feed.Producer, _ time.Time, id int64) error {
		requests <- id // accepted
		return nil
	})
	initiated := make(chan struct{}, 1)
	m, err := recovery.NewManager(api, ruleLog{initiated: initiated}, feed.NodeID{},
		recovery.Config{Producers: []feed.Producer{live}, Clock: clk})
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

	// What a session hands the manager: an alive stamped now, and the end of a replay.
	alive := func() {
		key, _ := feed.ParseRoutingKey("-.-.-.alive.-.-.-.-")
		m.HandleSystem(feed.Event{RawKey: key.String(), Key: key,
			Body: fmt.Appendf(nil, `<alive product="1" timestamp="%d" subscribed="1"/>`, clk.Now().UnixMilli())})
	}
	snapshotComplete := func(id int64) {
		key, _ := feed.ParseRoutingKey("-.-.-.snapshot_complete.-.-.-.-")
		m.HandleSystem(feed.Event{RawKey: key.String(), Key: key,
			Body: fmt.Appendf(nil, `<snapshot_complete product="1" timestamp="%d" request_id="%d"/>`, clk.Now().UnixMilli(), id)})
	}
	state := func() {
		_ = m.Flush(ctx)
		st, _ := m.Producer(live.ID)
		fmt.Printf("%s producer 1 is %s\n", clk.Now().Format(time.TimeOnly), st.State)
	}

	// The first alive: nothing is known of what was missed, so the recovery goes back ten
	// minutes; its snapshot_complete makes the producer healthy.
	alive()
	id := <-requests
	<-initiated
	snapshotComplete(id)
	state()

	// The last alive before the silence, which every message before it has been processed
	// through (the SDK's task tracker reports that; here the test does).
	clk.Advance(10 * time.Second)
	alive()
	m.ProcessedThrough(live.ID, clk.Now())
	state()

	clk.Advance(5 * time.Second) // the check of 12:00:15: silent 5 s, within the limit
	state()
	clk.Advance(15 * time.Second) // the check of 12:00:30: silent 20 s, past the limit
	state()

	// The alives resume: the recovery goes back to the recovery point.
	clk.Advance(10 * time.Second)
	alive()
	<-requests
	<-initiated
	state()
	// Output:
	// producer 1 down=true (InitialState)
	// recovery of producer 1 initiated from 11:50:00
	// producer 1 down=false (FirstRecoveryCompleted)
	// 12:00:00 producer 1 is healthy
	// 12:00:10 producer 1 is healthy
	// 12:00:15 producer 1 is healthy
	// producer 1 down=true (AliveIntervalViolation)
	// 12:00:30 producer 1 is disconnected
	// recovery of producer 1 initiated from 12:00:10
	// 12:00:40 producer 1 is recovering
}
