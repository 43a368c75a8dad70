// Command oddsfeed runs the odds-feed simulator and one session, on the embedded broker
// or on RabbitMQ, prints progress while the feed flows, and ends with a summary: messages
// by type, matches, errors, throughput, and a check that every message sent arrived, in
// order per match.
//
//	go run ./examples/oddsfeed                      # 10 s, 100 matches, 2,000 messages/s
//	go run ./examples/oddsfeed -duration 30s -matches 1000 -rate 10000
//	go run ./examples/oddsfeed -amqp amqp://guest:guest@127.0.0.1:5672/
//	go run ./examples/oddsfeed -threads 0           # one listener call at a time
//
// The listener runs on package concurrent's workers (-threads, 10 by default): the
// messages of different matches in parallel, each match's in order, which the final
// check verifies.
//
// Without -amqp it needs no services. With -amqp the simulator publishes to the exchange
// (-exchange, declared if missing) of that broker and the session consumes from it
// through package rabbitmq. It exits 0 after the summary, or 1 if anything was lost or
// reordered.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oddsfeed:", err)
		os.Exit(1)
	}
}

type options struct {
	duration time.Duration
	matches  int
	rate     float64
	progress time.Duration
	seed     uint64
	amqpURL  string
	exchange string
	threads  int
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("oddsfeed", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long the simulator publishes")
	fs.IntVar(&o.matches, "matches", 100, "matches running at any time")
	fs.Float64Var(&o.rate, "rate", 2000, "event messages per second (0: as fast as possible)")
	fs.DurationVar(&o.progress, "progress", time.Second, "interval between progress lines")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the simulated traffic")
	fs.StringVar(&o.amqpURL, "amqp", "", "RabbitMQ URL (amqp://user:pass@host:port/vhost); empty: the embedded broker")
	fs.StringVar(&o.exchange, "exchange", rabbitmq.DefaultExchange, "with -amqp: the topic exchange to publish to and consume from")
	fs.IntVar(&o.threads, "threads", concurrent.DefaultThreads, "workers of the concurrent listener (0: the serial dispatcher)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.duration <= 0:
		return o, fmt.Errorf("-duration %v must be positive", o.duration)
	case o.matches <= 0:
		return o, fmt.Errorf("-matches %d must be positive", o.matches)
	case o.rate < 0:
		return o, fmt.Errorf("-rate %v must not be negative", o.rate)
	case o.progress <= 0:
		return o, fmt.Errorf("-progress %v must be positive", o.progress)
	case o.threads < 0:
		return o, fmt.Errorf("-threads %d must not be negative", o.threads)
	}
	if o.rate == 0 {
		o.rate = feedtest.Unlimited
	}
	return o, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	tr, pub, where, closeBroker, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer closeBroker()
	sim, err := feedtest.NewSimulator(pub, feedtest.SimulatorConfig{
		Matches: o.matches, Rate: o.rate, Seed: o.seed,
		History: 0, // the default keeps the last 200,000 messages for the final check
	})
	if err != nil {
		return err
	}
	tally := newTally(out)
	cfg := feed.SessionConfig{Listener: tally, Global: tally, OnError: tally.onError}
	var workers *concurrent.OddsFeedListener
	if o.threads > 0 {
		// The concurrent listener takes the session's raw messages; its global listener
		// would hold producer ups back until their recovery's messages are processed.
		tracker := concurrent.NewTaskLifecycleTracker()
		workers, err = concurrent.NewOddsFeedListener(tally, tracker, concurrent.Config{Threads: o.threads, OnError: tally.onError})
		if err != nil {
			return err
		}
		global, err := concurrent.NewGlobalEventsListener(tally, tracker, concurrent.GlobalConfig{OnError: tally.onError})
		if err != nil {
			return err
		}
		defer global.Close(context.Background())
		cfg.Listener, cfg.Dispatcher, cfg.Global = nil, workers, global
	}
	session, err := feed.NewSession(tr, cfg)
	if err != nil {
		return err
	}
	if err := session.Open(ctx); err != nil {
		return err
	}
	// Publish only once the session's queue is bound: before, messages reach no queue.
	select {
	case <-tally.up:
	case <-ctx.Done():
		return session.Close(context.Background())
	}
	fmt.Fprintf(out, "oddsfeed: %d matches, %s messages/s for %v on %s, %s; bound to %v\n",
		o.matches, rateText(o.rate), o.duration, where, dispatchText(o.threads), session.BindingKeys())

	start := time.Now()
	simCtx, stopSim := context.WithTimeout(ctx, o.duration)
	defer stopSim()
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Run(simCtx) }()

	ticker := time.NewTicker(o.progress)
	defer ticker.Stop()
	last, lastAt := 0, start
progress:
	for {
		select {
		case <-ticker.C:
			n, now := tally.total(), time.Now()
			fmt.Fprintf(out, "  %5.1fs  received %8d  %8.0f/s  matches %6d  unparsable %d  errors %d\n",
				now.Sub(start).Seconds(), n, float64(n-last)/now.Sub(lastAt).Seconds(),
				tally.matchCount(), tally.unparsableCount(), tally.errorCount())
			last, lastAt = n, now
		case err := <-simDone:
			if err != nil && ctx.Err() == nil {
				return err
			}
			break progress
		}
	}
	// The simulator has stopped (its time is up, or Ctrl-C): what it published is in the
	// broker or the session. Deliver it all before closing, even after an interrupt, so that
	// the summary is complete; a fresh context bounds the wait.
	done, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if f, ok := pub.(interface{ Flush(context.Context) error }); ok {
		if err := f.Flush(done); err != nil {
			return err
		}
	}
	tally.waitFor(done, int(sim.Stats().Events))
	elapsed := time.Since(start)
	if err := session.Close(done); err != nil {
		return err
	}
	return summarize(out, sim, tally, session.Stats(), workers, elapsed)
}

func dispatchText(threads int) string {
	if threads == 0 {
		return "serial dispatch"
	}
	return fmt.Sprintf("%d workers", threads)
}

// connect returns the transport the session consumes from and the publisher the
// simulator feeds: the embedded broker, or RabbitMQ with -amqp.
func connect(ctx context.Context, o options) (tr feed.Transport, pub feedtest.Publisher, where string, closeAll func(), err error) {
	if o.amqpURL == "" {
		broker := feedtest.NewBroker(feedtest.BrokerOptions{})
		return broker, broker, "the embedded broker", broker.Close, nil
	}
	cfg := rabbitmq.Config{URL: o.amqpURL, Exchange: o.exchange, DeclareExchange: true, ConnectionName: "feedkit-oddsfeed"}
	t, err := rabbitmq.New(cfg)
	if err != nil {
		return nil, nil, "", nil, err
	}
	cfg.ConnectionName = "feedkit-oddsfeed-simulator"
	p, err := rabbitmq.NewPublisher(ctx, cfg)
	if err != nil {
		return nil, nil, "", nil, err
	}
	closeAll = func() { _ = p.Close(context.Background()) }
	return t, p, fmt.Sprintf("RabbitMQ (exchange %s)", o.exchange), closeAll, nil
}

func rateText(r float64) string {
	if r == feedtest.Unlimited {
		return "unlimited"
	}
	return fmt.Sprintf("%.0f", r)
}

func summarize(out io.Writer, sim *feedtest.Simulator, t *tally, st feed.SessionStats, workers *concurrent.OddsFeedListener, elapsed time.Duration) error {
	lost, reordered := t.check(sim)
	fmt.Fprintln(out, "\nsummary")
	line := func(label string, v any) { fmt.Fprintf(out, "  %-26s %10v\n", label, v) }
	types := make([]feed.MessageType, 0, len(t.byType))
	for typ := range t.byType {
		types = append(types, typ)
	}
	slices.Sort(types)
	for _, typ := range types {
		line(typ.String(), t.byType[typ])
	}
	line("event messages", t.total())
	line("system messages (alive)", st.System)
	line("connection losses", st.ConnectionDowns)
	line("matches", t.matchCount())
	line("unparsable", t.unparsableCount())
	line("errors reported", t.errorCount())
	if workers != nil {
		per := workers.Stats().Workers
		line("messages per worker", fmt.Sprintf("%d–%d", slices.Min(per), slices.Max(per)))
	}
	line("elapsed", fmt.Sprintf("%.2fs", elapsed.Seconds()))
	line("messages/s", fmt.Sprintf("%.0f", float64(t.total())/elapsed.Seconds()))
	line("lost", lost)
	line("out of order", reordered)
	if sim.Forgotten() > 0 {
		fmt.Fprintf(out, "  (the check covers the last %d messages sent)\n", len(sim.Sent()))
	}
	if lost > 0 || reordered > 0 {
		return errors.New("messages were lost or reordered")
	}
	return nil
}

// tally is the example's listener: it counts what arrives and keeps, per match, the
// timestamps received, to check them against what the simulator sent. It hears of the
// connection too.
type tally struct {
	feed.BaseGlobalEventsListener
	out        io.Writer
	up         chan struct{} // signalled at every ConnectionUp
	mu         sync.Mutex
	cond       *sync.Cond
	byType     map[feed.MessageType]int
	byMatch    map[feed.URN][]time.Time
	n          int
	unparsable int
	errors     int
}

func newTally(out io.Writer) *tally {
	t := &tally{out: out, up: make(chan struct{}, 1), byType: map[feed.MessageType]int{}, byMatch: map[feed.URN][]time.Time{}}
	t.cond = sync.NewCond(&t.mu)
	return t
}

func (t *tally) add(m feed.Message) error {
	h := m.MessageHeader()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.byType[m.Type()]++
	t.byMatch[h.Event] = append(t.byMatch[h.Event], h.Timestamp)
	t.n++
	t.cond.Broadcast()
	return nil
}

// OnConnectionUp signals the session's queue is consuming.
func (t *tally) OnConnectionUp(context.Context) {
	select {
	case t.up <- struct{}{}:
	default:
	}
}

// OnConnectionDown tells the user: what is published until the connection is back is lost
// to this session (the recovery API, in a later step, fetches it).
func (t *tally) OnConnectionDown(_ context.Context, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "  connection down: %v\n", err)
}

func (t *tally) onError(error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errors++
}

func (t *tally) total() int           { t.mu.Lock(); defer t.mu.Unlock(); return t.n }
func (t *tally) matchCount() int      { t.mu.Lock(); defer t.mu.Unlock(); return len(t.byMatch) }
func (t *tally) unparsableCount() int { t.mu.Lock(); defer t.mu.Unlock(); return t.unparsable }
func (t *tally) errorCount() int      { t.mu.Lock(); defer t.mu.Unlock(); return t.errors }

// waitFor waits until n messages arrived or ctx ends.
func (t *tally) waitFor(ctx context.Context, n int) {
	stop := context.AfterFunc(ctx, func() {
		t.mu.Lock()
		t.cond.Broadcast()
		t.mu.Unlock()
	})
	defer stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.n < n && ctx.Err() == nil {
		t.cond.Wait()
	}
}

// check compares what arrived with what the simulator sent: how many of the messages
// published never arrived, and, per match, whether those the simulator's history still
// holds arrived in the order they were sent.
func (t *tally) check(sim *feedtest.Simulator) (lost, reordered int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lost = max(0, int(sim.Stats().Events)-t.n)
	for event, sent := range sim.EventsByMatch() {
		got := t.byMatch[event]
		if len(got) > len(sent) {
			got = got[len(got)-len(sent):] // the history kept only the match's latest messages
		}
		for i := range min(len(got), len(sent)) {
			if !got[i].Equal(sent[i].Message.MessageHeader().Timestamp) {
				reordered++
			}
		}
	}
	return lost, reordered
}

func (t *tally) OnOddsChange(_ context.Context, m *feed.OddsChange) error { return t.add(m) }
func (t *tally) OnBetStop(_ context.Context, m *feed.BetStop) error       { return t.add(m) }
func (t *tally) OnBetSettlement(_ context.Context, m *feed.BetSettlement) error {
	return t.add(m)
}
func (t *tally) OnRollbackBetSettlement(_ context.Context, m *feed.RollbackBetSettlement) error {
	return t.add(m)
}
func (t *tally) OnBetCancel(_ context.Context, m *feed.BetCancel) error { return t.add(m) }
func (t *tally) OnRollbackBetCancel(_ context.Context, m *feed.RollbackBetCancel) error {
	return t.add(m)
}
func (t *tally) OnFixtureChange(_ context.Context, m *feed.FixtureChange) error { return t.add(m) }
func (t *tally) OnUnparsableMessage(context.Context, *feed.UnparsableMessage) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unparsable++
	return nil
}
