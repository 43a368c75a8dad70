package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/promfeedkit"
)

// restartPause is how long, in real time, the feed goes on while the process is stopped
// (-restart), before the feed's clock jumps over the rest of the stop: what it sends
// then is stamped early in the stop, more than the 10 minutes a process that knows
// nothing recovers before its restart, and only the producer records (-state) bring it
// back.
const restartPause = time.Second

// process is the SDK of one run of the program. A restart (-restart) closes it and opens
// another on the same configuration, producer records included, as a process stopped
// and started again.
type process struct {
	cfg      feedkit.Config
	listener feed.OddsFeedListener
	timeline *timeline
	sdk      *feedkit.SDK                // nil while stopped
	stats    figures                     // of the processes stopped so far, summed
	built    func(*feedkit.SDK)          // called with each SDK before it opens
	serving  atomic.Pointer[feedkit.SDK] // the SDK -http serves; nil between processes
	// metrics is the Prometheus registry of the SDK serving now (-http): each process has
	// its own, so counters start again from zero after a restart, as a real one's do.
	metrics atomic.Pointer[prometheus.Registry]
}

// start opens a new SDK and returns once its session's queue is bound: before, what
// the simulator publishes reaches no queue. If ctx ends first, the SDK is closed again
// and ctx.Err() returned.
func (p *process) start(ctx context.Context) error {
	select { // the previous process's connection, if any, is no sign of this one's
	case <-p.timeline.connected:
	default:
	}
	reg := prometheus.NewRegistry()
	var opts []promfeedkit.Option
	if p.cfg.Clock != nil {
		opts = append(opts, promfeedkit.WithClock(p.cfg.Clock))
	}
	m, err := promfeedkit.New(reg, opts...)
	if err != nil {
		return err
	}
	cfg := p.cfg
	cfg.Observer = m
	sdk, err := feedkit.New(cfg)
	if err != nil {
		return err
	}
	if err := m.WatchSDK(sdk); err != nil {
		return err
	}
	if p.built != nil {
		p.built(sdk)
	}
	if err := sdk.AddSession(feed.AllMessages, p.listener); err != nil {
		return err
	}
	p.serving.Store(sdk)
	p.metrics.Store(reg)
	if err := sdk.Open(ctx); err != nil {
		return err
	}
	p.sdk = sdk
	select {
	case <-p.timeline.connected:
		return nil
	case <-ctx.Done():
		_ = p.stop(context.Background())
		return ctx.Err()
	}
}

// stop closes the SDK, if one is open, and keeps its figures for the summary.
func (p *process) stop(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	p.serving.Store(nil)
	p.metrics.Store(nil)
	err := p.sdk.Close(ctx)
	p.stats = p.stats.add(figuresOf(p.sdk.Stats()))
	p.sdk = nil
	return err
}

// figures are the SDK's counters the summary shows, summed over the processes.
type figures struct {
	system, connectionDowns, requested, completed, deferred uint64
	workers                                                 []uint64 // messages per worker; nil with serial delivery
}

func figuresOf(st feedkit.Stats) figures {
	f := figures{system: st.Sessions[0].System, connectionDowns: st.Sessions[0].ConnectionDowns,
		requested: st.Recovery.RecoveriesRequested, completed: st.Recovery.RecoveriesCompleted, deferred: st.Global.Deferred}
	if c := st.Delivery[0].Concurrent; c != nil {
		f.workers = c.Workers
	}
	return f
}

// add sums two processes' figures, every one of them (the test checks by reflection
// that none is left out), the messages per worker worker by worker.
func (f figures) add(g figures) figures {
	sum := figures{system: f.system + g.system, connectionDowns: f.connectionDowns + g.connectionDowns,
		requested: f.requested + g.requested, completed: f.completed + g.completed, deferred: f.deferred + g.deferred}
	if f.workers != nil || g.workers != nil {
		sum.workers = make([]uint64, max(len(f.workers), len(g.workers)))
		for i := range sum.workers {
			if i < len(f.workers) {
				sum.workers[i] += f.workers[i]
			}
			if i < len(g.workers) {
				sum.workers[i] += g.workers[i]
			}
		}
	}
	return sum
}

// restart stops the process and starts it again (-restart): the SDK is closed, the feed
// goes on for restartPause, its clock jumps ahead by the rest of the stop, and a new
// SDK opens on the same producer records.
type restart struct {
	o          options
	proc       *process
	state      stateStore
	producer   int
	clock      *feedClock
	ledger     *ledger
	tl         *timeline
	done       bool
	upsAtStart int // how many times the producer had come up when the new process started
}

func (r *restart) run(ctx context.Context) error {
	r.done = true
	r.tl.printf("restart: the process stops for %v of the feed's time, at %s", r.o.restart, stamp(r.clock.Now()))
	closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := r.proc.stop(closing); err != nil {
		return err
	}
	r.tl.printf("restart: %s", r.state.lastRecord(ctx, r.producer, r.clock.Now()))
	// The feed goes on without the process: what it sends now, only a recovery from the
	// last record brings back. At least one message, however slow the machine.
	sent := r.ledger.sentCount()
	pause := time.After(restartPause)
	for paused := false; !paused || r.ledger.sentCount() == sent; {
		select {
		case <-pause:
			paused = true
		case <-r.ledger.sentSignal:
		case <-ctx.Done():
			return nil
		}
	}
	r.clock.jump(r.o.restart - restartPause)
	_, r.upsAtStart = r.tl.producer()
	r.tl.printf("restart: the process starts again at %s", stamp(r.clock.Now()))
	if err := r.proc.start(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// recovered reports whether the producer has come up in the new process: its recovery
// from the last record, and the replay, are done.
func (r *restart) recovered() bool {
	_, ups := r.tl.producer()
	return r.done && ups > r.upsAtStart
}
