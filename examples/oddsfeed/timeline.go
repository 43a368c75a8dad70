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
// stamped with the time since the start, and keeps the producer's state for the run's
// script, which it wakes at every change.
//
// Until the run's header is printed (begin), it holds its lines back: the SDK reports
// its first events while it opens, before the header can say what Open found.
type timeline struct {
	out       io.Writer
	start     time.Time
	tally     *tally
	connected chan struct{} // signalled at every ConnectionUp
	changed   chan struct{} // signalled at every producer status change
	mu        sync.Mutex
	held      []string // lines printed before the header, oldest first
	begun     bool     // the header is out: lines are written as they come
	up        bool     // the producer's last status
	ups       int      // how many times it came up
	replayed  int      // replayed messages received when it last came up
}

func newTimeline(out io.Writer, start time.Time, t *tally) *timeline {
	return &timeline{out: out, start: start, tally: t, connected: make(chan struct{}, 1), changed: make(chan struct{}, 1)}
}

func (tl *timeline) printf(format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	line := fmt.Sprintf("  %6.2fs  %s\n", time.Since(tl.start).Seconds(), fmt.Sprintf(format, args...))
	if !tl.begun {
		tl.held = append(tl.held, line)
		return
	}
	io.WriteString(tl.out, line)
}

// begin writes the run's header, then the lines held back until now, and from then on
// writes each line as it comes.
func (tl *timeline) begin(header string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	io.WriteString(tl.out, header)
	for _, line := range tl.held {
		io.WriteString(tl.out, line)
	}
	tl.held, tl.begun = nil, true
}

// producer returns whether the producer is up and how many times it has come up.
func (tl *timeline) producer() (up bool, ups int) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.up, tl.ups
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (tl *timeline) OnConnectionUp(_ context.Context, s feed.SessionRef) {
	tl.printf("connection up on %s", s)
	notify(tl.connected)
}

func (tl *timeline) OnConnectionDown(_ context.Context, s feed.SessionRef, err error) {
	tl.printf("connection down on %s: %v", s, err)
}

func (tl *timeline) OnProducerStatusChange(_ context.Context, s feed.ProducerStatus) {
	if s.Down && s.Session != nil {
		tl.printf("producer %d down (%s) on %s", s.Producer, s.Reason, s.Session)
	} else if s.Down {
		tl.printf("producer %d down (%s)", s.Producer, s.Reason)
	} else {
		// The SDK holds an up back until the recovery's messages are processed: by now
		// they all have been. Those received since the last up are this recovery's.
		replayed := tl.tally.replayedCount()
		tl.mu.Lock()
		n := replayed - tl.replayed
		tl.replayed = replayed
		tl.mu.Unlock()
		tl.printf("producer %d up (%s), after processing %s", s.Producer, s.Reason, plural(n, "replayed message"))
	}
	tl.mu.Lock()
	tl.up = !s.Down
	if tl.up {
		tl.ups++
	}
	tl.mu.Unlock()
	notify(tl.changed)
}

func (tl *timeline) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated) {
	tl.printf("recovery #%d requested for producer %d, from %s", r.RequestID, r.Producer, r.After.Format("15:04:05.000"))
}

func (tl *timeline) OnEventRecoveryCompleted(context.Context, feed.EventRecoveryCompleted) {}

// outage stops a producer's alives, and on the embedded broker drops the connection. Each
// step is printed before it is taken, so that what it causes is printed after it.
type outage struct {
	sim      *feedtest.Simulator
	broker   *feedtest.Broker
	producer int
	tl       *timeline
	length   time.Duration
	started  bool
	stopped  bool
	upsAtEnd int // how many times the producer had come up when the outage ended
}

func newOutage(o options, sim *feedtest.Simulator, l link, producer int, tl *timeline) *outage {
	return &outage{sim: sim, broker: l.broker, producer: producer, tl: tl, length: o.outage}
}

func (o *outage) start() {
	o.started = true
	if o.broker != nil {
		o.tl.printf("outage: alives stop and the connection drops for %v", o.length)
		o.sim.StopAlives(o.producer)
		o.broker.Disconnect(errors.New("simulated outage"))
	} else {
		o.tl.printf("outage: alives stop for %v", o.length)
		o.sim.StopAlives(o.producer)
	}
}

func (o *outage) stop() {
	if !o.started || o.stopped {
		return
	}
	o.stopped = true
	_, o.upsAtEnd = o.tl.producer()
	o.tl.printf("outage over: alives resume")
	if o.broker != nil {
		o.broker.Reconnect()
	}
	o.sim.ResumeAlives(o.producer)
}

// recovered reports whether the producer has come up again since the outage ended: its
// recovery and the replay are done.
func (o *outage) recovered() bool {
	_, ups := o.tl.producer()
	return o.stopped && ups > o.upsAtEnd
}
