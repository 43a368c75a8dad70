package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/carousel"
	cpgstore "github.com/feedkit/feedkit/carousel/pgstore"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/group"
	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/recovery"
	rpgstore "github.com/feedkit/feedkit/recovery/pgstore"
)

// The lines -role all reads in its children's output.
const (
	apiPrefix     = "api "         // the feed: its API's URL
	outageOver    = "outage over"  // the feed: the producer's alives resume
	sentPrefix    = "total: sent " // the feed, as it ends: the live event messages it sent
	activeLine    = "active"       // an ingress: it reads the feed now
	passiveLine   = "passive"      // an ingress: it stopped reading the feed
	upMarker      = " up ("        // a status line: "producer 1 up (Reason)"
	downMarker    = " down ("
	statusPrefix  = "producer "
	standbyMarker = "standby"
)

// producer is the simulator's one producer: live odds.
func producer() feed.Producer {
	p, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	return p
}

// runFeed is the feed: the simulator publishing to -exchange on -amqp, as the feed's
// broker would, and serving the feed's API (the account, the producers, the recoveries)
// on -listen, until ctx ends. -outage stops the producer's alives for a while, -outage-at
// in. As it ends it prints how many live event messages it sent.
func runFeed(ctx context.Context, o options, out *printer) error {
	pub, err := rabbitmq.NewPublisher(ctx, rabbitmq.Config{URL: o.amqpURL, Exchange: o.exchange, DeclareExchange: true,
		ConnectionName: "groupdemo-feed"})
	if err != nil {
		return fmt.Errorf("-amqp: %w", err)
	}
	defer func() { _ = pub.Close(context.Background()) }()
	lo := producer()
	// The history holds what a recovery after the outage or a fail-over replays.
	sim, err := feedtest.NewSimulator(wholeWrites{pub}, feedtest.SimulatorConfig{Producers: []feed.Producer{lo},
		Matches: o.matches, Rate: o.rate, Seed: o.seed, AliveInterval: aliveInterval, HistoryAge: 10 * time.Minute})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	srv := &http.Server{Handler: sim.APIHandler(feedtest.Account{}), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		<-served
	}()
	out.printf("%shttp://%s", apiPrefix, ln.Addr())
	out.printf("publishing %.0f event messages/s of %d matches to the exchange %s, producer %d's alives every %v",
		o.rate, o.matches, o.exchange, lo.ID, aliveInterval)

	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Run(simCtx) }()
	var begin, end <-chan time.Time
	if o.outage > 0 {
		begin = time.After(o.outageAt)
	}
	tick := time.NewTicker(o.progress)
	defer tick.Stop()
	var last uint64
loop:
	for {
		select {
		case <-tick.C:
			st := sim.Stats()
			out.printf("sent %d live (%.0f/s), %d replayed", st.Events, float64(st.Events-last)/o.progress.Seconds(), st.Replayed)
			last = st.Events
		case <-begin:
			begin = nil
			out.printf("outage: producer %d's alives stop for %v", lo.ID, o.outage)
			sim.StopAlives(lo.ID)
			end = time.After(o.outage)
		case <-end:
			end = nil
			out.printf("%s: producer %d's alives resume", outageOver, lo.ID)
			sim.ResumeAlives(lo.ID)
		case err := <-simDone:
			return err // a publishing error: the simulator stopped on its own
		case <-ctx.Done():
			break loop
		}
	}
	stopSim()
	if err := <-simDone; err != nil {
		return err
	}
	flush, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pub.Flush(flush); err != nil {
		return fmt.Errorf("flushing the publisher: %w", err)
	}
	sim.WaitReplays()
	st := sim.Stats()
	out.printf("%s%d live event messages, %d replayed, %d alives", sentPrefix, st.Events, st.Replayed, st.Alives)
	return nil
}

// wholeWrites lets a publish under way finish when the feed stops: a write cut short
// leaves the publisher's connection unusable, and the final flush would fail.
type wholeWrites struct{ *rabbitmq.Publisher }

func (w wholeWrites) Publish(ctx context.Context, key string, body []byte) error {
	return w.Publisher.Publish(context.WithoutCancel(ctx), key, body)
}

// feedConfig is the SDK's configuration on the feed, as a single process has it and as
// an ingress does: the same environment, token, broker and recovery. Only the node
// differs, so that the two can run side by side, each getting its own replays.
func feedConfig(o options, node int, store recovery.Store, global feed.GlobalEventsListener, out *printer) (feedkit.Config, error) {
	transport, err := rabbitmq.New(rabbitmq.Config{URL: o.amqpURL, Exchange: o.exchange, DeclareExchange: true,
		ConnectionName: fmt.Sprintf("groupdemo-%s", o.role)})
	if err != nil {
		return feedkit.Config{}, fmt.Errorf("-amqp: %w", err)
	}
	env := feedkit.CustomEnvironment("", o.api)
	return feedkit.Config{
		Environment: &env,
		AccessToken: feedtest.DefaultAccessToken,
		Transport:   transport,
		Node:        feed.Node(node),
		Global:      global,
		Recovery: recovery.Config{
			HeartbeatLimits: map[int]time.Duration{producer().ID: heartbeatLimit},
			CheckInterval:   checkInterval,
			Store:           store,
		},
		OnError: func(err error) { out.printf("error: %v", err) },
	}, nil
}

// postgres is what -pg gives: the recovery point's store and the ingresses' lease.
type postgres struct {
	pool  *pgxpool.Pool // nil without -pg
	store recovery.Store
}

// openPostgres opens -pg, the recovery point's table prefixed by tablePrefix.
func openPostgres(ctx context.Context, url, tablePrefix string) (postgres, error) {
	if url == "" {
		return postgres{}, nil
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return postgres{}, fmt.Errorf("-pg: %w", err)
	}
	store, err := rpgstore.NewStore(ctx, pool, rpgstore.Options{TablePrefix: tablePrefix})
	if err != nil {
		pool.Close()
		return postgres{}, fmt.Errorf("-pg: %w", err)
	}
	return postgres{pool: pool, store: store}, nil
}

func (p postgres) close() {
	if p.pool != nil {
		p.pool.Close()
	}
}

// topology is the group's, as every ingress and worker must be given it.
func topology(o options) group.Topology {
	return group.Topology{Prefix: o.prefix, Shards: o.k}
}

// runIngress is an ingress: while it is the active one, it reads the feed and shares it
// out over the group's shard queues. With -pg the ingresses share a lease, so that one
// of them is active and a standby takes over when it stops, and the recovery point, so
// that the standby resumes where it stopped.
func runIngress(ctx context.Context, o options, out *printer) error {
	pg, err := openPostgres(ctx, o.pg, "") // the default prefix

	if err != nil {
		return err
	}
	defer pg.close()
	var toggle carousel.Toggle // nil: always active, one ingress
	where := "in memory"
	if pg.pool != nil {
		lease, err := cpgstore.NewLease(pg.pool, cpgstore.LeaseOptions{Name: o.prefix + "-ingress", Failover: true})
		if err != nil {
			return fmt.Errorf("-pg: %w", err)
		}
		defer func() { _ = lease.Close(context.Background()) }()
		toggle, where = lease, "in PostgreSQL, with a lease"
	}
	sdk, err := feedConfig(o, 1, pg.store, &statuses{out: out}, out)
	if err != nil {
		return err
	}
	in, err := group.NewIngress(group.IngressConfig{
		SDK:      sdk,
		URL:      o.groupAMQP,
		Topology: topology(o),
		Toggle:   toggle,
		OnError:  func(err error) { out.printf("error: %v", err) },
		OnStateChange: func(active bool, epoch int64) {
			if active {
				out.printf("%s, epoch %d: reading the feed", activeLine, epoch)
			} else {
				out.printf("%s: epoch %d over", passiveLine, epoch)
			}
		},
	})
	if err != nil {
		return err
	}
	out.printf("ingress: the feed on %s, shared out over %d shards (%s.shard.0 to %d); recovery point %s",
		o.exchange, o.k, o.prefix, o.k-1, where)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if err := serveMetrics(runCtx, o.http, func(m *promfeedkit.GroupMetrics) error { return m.WatchIngress(in) }, out); err != nil {
		return err
	}
	ran := make(chan error, 1)
	go func() { ran <- in.Run(runCtx) }()
	tick := time.NewTicker(o.progress)
	defer tick.Stop()
	var last uint64
	for {
		select {
		case <-tick.C:
			st := in.Stats()
			if st.Active {
				out.printf("published %d (%.0f/s), confirmed %d", st.Published, float64(st.Published-last)/o.progress.Seconds(), st.Confirmed)
				last = st.Published
			} else {
				last = 0
			}
		case err := <-ran:
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil // stopped by a signal
			}
			return err
		}
	}
}

// runWorker is a worker: it delivers the messages of its shards (-shards of -of) to the
// listener, each match's in order. A second worker given the same shards is its
// standby.
func runWorker(ctx context.Context, o options, out *printer) error {
	c, st := newCounter(o.work), &statuses{out: out}
	w, err := group.NewWorker(group.WorkerConfig{
		URL:            o.groupAMQP,
		Topology:       topology(o),
		Shards:         o.consum,
		Listener:       c,  // the listener a single process gives AddSession
		Global:         st, // and its global events listener
		Concurrent:     concurrent.Config{Threads: o.threads},
		OnError:        func(err error) { out.printf("error: %v", err) },
		ConnectionName: "groupdemo-worker-" + shardList(o.consum),
	})
	if err != nil {
		return err
	}
	out.printf("worker: shards %s of %d, %d threads", shardList(o.consum), o.k, o.threads)
	if err := serveMetrics(ctx, o.http, func(m *promfeedkit.GroupMetrics) error { return m.WatchWorker(w) }, out); err != nil {
		return err
	}
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	tick := time.NewTicker(o.progress)
	defer tick.Stop()
	var last uint64
	for {
		select {
		case <-tick.C:
			out.printf("%s", progressLine(c, &last, o.progress, activeShards(w.Stats())))
		case err := <-ran:
			makeSummary(roleWorker, o.consum, c, st).print(out)
			return err
		}
	}
}

// activeShards says which of a worker's shards it is the active consumer of.
func activeShards(st group.WorkerStats) string {
	var active []int
	for _, s := range st.Shards {
		if s.Active {
			active = append(active, s.Shard)
		}
	}
	switch {
	case !st.Connected:
		return "not connected"
	case len(active) == 0:
		return standbyMarker + " (or idle)"
	}
	return "active on " + shardList(active)
}

// runSingle is the same listener in one process: the SDK on the feed, as a program
// without a group has it.
func runSingle(ctx context.Context, o options, out *printer) error {
	// Records of its own: the ingresses' are the group's recovery point.
	pg, err := openPostgres(ctx, o.pg, "groupdemo_single_")
	if err != nil {
		return err
	}
	defer pg.close()
	c, st := newCounter(o.work), &statuses{out: out}
	cfg, err := feedConfig(o, 2, pg.store, st, out)
	if err != nil {
		return err
	}
	cfg.Concurrent = &concurrent.Config{Threads: o.threads}
	sdk, err := feedkit.New(cfg)
	if err != nil {
		return err
	}
	if err := sdk.AddSession(feed.AllMessages, c); err != nil {
		return err
	}
	out.printf("single: the feed on %s, %d threads", o.exchange, o.threads)
	if err := sdk.Open(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	tick := time.NewTicker(o.progress)
	defer tick.Stop()
	var last uint64
	for done := false; !done; {
		select {
		case <-tick.C:
			out.printf("%s", progressLine(c, &last, o.progress, ""))
		case <-ctx.Done():
			done = true
		}
	}
	closing, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = sdk.Close(closing)
	makeSummary(roleSingle, nil, c, st).print(out)
	return err
}
