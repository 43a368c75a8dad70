package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// timeline is the example's GlobalEventsListener: it prints what happens to the feed,
// stamped with the time since the start.
type timeline struct {
	out       io.Writer
	start     time.Time
	tally     *tally
	connected chan struct{} // signalled at every ConnectionUp
	mu        sync.Mutex
}

func newTimeline(out io.Writer, start time.Time, t *tally) *timeline {
	return &timeline{out: out, start: start, tally: t, connected: make(chan struct{}, 1)}
}

func (tl *timeline) printf(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Fprintf(tl.out, "  %6.2fs  %s\n", time.Since(tl.start).Seconds(), fmt.Sprintf(format, args...))
}

func (tl *timeline) OnConnectionUp(context.Context) {
	tl.printf("connection up")
	select {
	case tl.connected <- struct{}{}:
	default:
	}
}

func (tl *timeline) OnConnectionDown(_ context.Context, err error) {
	tl.printf("connection down: %v", err)
}

func (tl *timeline) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	if s.Down {
		tl.printf("producer %d down (%s)", s.Producer, s.Reason)
		return
	}
	// The SDK holds an up back until the recovery's messages are processed: by now they
	// all have been.
	tl.printf("producer %d up (%s), after processing %d replayed messages", s.Producer, s.Reason, tl.tally.replayedCount())
}

func (tl *timeline) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated) {
	tl.printf("recovery #%d requested for producer %d, from %s", r.RequestID, r.Producer, r.After.Format("15:04:05.000"))
}

func (tl *timeline) OnEventRecoveryCompleted(context.Context, feed.EventRecoveryCompleted) {}

// outage stops a producer's alives, and on the embedded broker drops the connection,
// for -outage, a third of the way through the run.
type outage struct {
	begin, end <-chan time.Time
	sim        *feedtest.Simulator
	broker     *feedtest.Broker
	producer   int
	tl         *timeline
	started    bool
	stopped    bool
	length     time.Duration
}

func newOutage(o options, sim *feedtest.Simulator, l link, producer int, tl *timeline) *outage {
	out := &outage{sim: sim, broker: l.broker, producer: producer, tl: tl, length: o.outage}
	if o.outage > 0 {
		out.begin = time.After(o.duration / 3)
	}
	return out
}

func (o *outage) start() {
	o.started = true
	o.end = time.After(o.length)
	o.sim.StopAlives(o.producer)
	if o.broker != nil {
		o.broker.Disconnect(errors.New("simulated outage"))
		o.tl.printf("outage: alives stopped and the connection dropped for %v", o.length)
	} else {
		o.tl.printf("outage: alives stopped for %v", o.length)
	}
}

func (o *outage) stop() {
	if !o.started || o.stopped {
		return
	}
	o.stopped = true
	o.end = nil
	if o.broker != nil {
		o.broker.Reconnect()
	}
	o.sim.ResumeAlives(o.producer)
	o.tl.printf("outage over: alives resume")
}
