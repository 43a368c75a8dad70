// Command oddsfeed runs the odds-feed simulator and the feedkit SDK on it, on the embedded
// broker or on RabbitMQ. It prints what the run is, then what happens while the feed
// flows, then a summary of the whole run: each event message sent received live,
// recovered by a replay or lost (never received), the copies received more than once,
// messages by type, distinct matches, the recoveries, errors, throughput. Its last line is
// the verdict: whether every message sent was received and each match's live messages in
// order.
//
//	go run ./examples/oddsfeed                      # 10 s, 100 matches, 2,000 messages/s
//	go run ./examples/oddsfeed -duration 30s -matches 1000 -rate 10000
//	go run ./examples/oddsfeed -amqp amqp://guest:guest@127.0.0.1:5672/
//	go run ./examples/oddsfeed -threads 0           # one listener call at a time
//	go run ./examples/oddsfeed -outage 0            # no outage
//	go run ./examples/oddsfeed -state producers.json -restart 15m
//	go run ./examples/oddsfeed -state "$FEEDKIT_PG_URL" -restart 15m
//	go run ./examples/oddsfeed -names en            # markets and outcomes by name
//
// A third of the way in, once the producer is up, the feed has an outage (-outage long):
// the producer's alives stop, so the SDK reports it down; on the embedded broker the
// connection drops too, and what is published meanwhile is not delivered live. The
// outage ends once it has lasted -outage and the producer was found down. When the alives
// resume, the SDK requests a recovery from the last alive before the outage, the
// simulator's recovery API replays what was sent since (what was not delivered live, and
// messages the listener already had, which it receives twice), and the producer's up
// reaches the listener only once every replayed message has been processed. The run
// lasts -duration, or longer if that up has not come by then: the story is driven by the
// feed's events, so it is told whole on a machine of any speed.
//
// The SDK keeps its producer records, what a restarted process recovers each producer
// from, where -state says: a file (recovery.FileStore) or PostgreSQL (pgstore.Store).
// Without it they are in memory and go with the process, and a process that knows
// nothing recovers the last 10 minutes only (recovery.Config.AssumedDowntime). -restart
// shows the difference: two thirds of the way in, once the producer is up, the process
// stops (the SDK is closed), the feed goes on for a second, then its clock jumps over the
// rest of the stop, and a new SDK opens on the same records. With -state it recovers
// from its last record, over the whole stop, and nothing is lost; in memory, what the
// feed sent early in a stop longer than 10 minutes is never seen, and the run fails.
//
// The summary's accounts come from a ledger in front of the broker that notes each event
// message as the simulator publishes it and strikes it off when the listener receives it,
// live or replayed; it holds only what is on its way, and the simulator keeps only the
// last -outage plus 5 seconds (or -restart plus a minute) of messages for its replays
// (within 64 MiB, or 256 MiB with -rate 0), so memory stays flat however long the run.
//
// The SDK is set up from an access token and an environment, as with Sportradar's SDKs:
// feedkit.CustomEnvironment with the simulator's API, from which Open reads the account
// (whoami) and the producers to follow; the broker, embedded or -amqp, is given as
// Config.Transport.
//
// With -names, the listener names the markets and outcomes of every bet settlement in
// that language with the SDK's Names (package feed/markets), read from the simulator's
// Sports API, prints the first few ("Total 2.5: over 2.5"), and counts the names in the
// summary.
//
// The listener runs on package concurrent's workers (-threads, 10 by default): the
// messages of different matches in parallel, each match's in order. The heartbeat limit
// and check interval are shortened so that the story fits in seconds.
//
// Without -amqp it needs no services. With -amqp the simulator publishes to the exchange
// (-exchange, declared if missing) of that broker and the SDK consumes from it through
// package rabbitmq. Its last line is the verdict: OK if every message sent was received
// and each match's live messages in order, else FAILED and why; it exits 0 or 1 to match.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/recovery"
)

func main() {
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// command runs the program with the command line's arguments and returns its exit
// status: 0 after -h, which prints the usage, or after a run whose verdict is OK; 1 for
// a bad flag, an error, or a run whose verdict is FAILED.
func command(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C ends the feed and lets the run account for what it sent; a second
	// one ends the program at once.
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errFailed):
		return 1 // the verdict, the last line printed, says why
	case err != nil:
		fmt.Fprintln(stderr, "oddsfeed:", err)
		return 1
	}
	return 0
}

// usage is what -h prints before the flags: what the program does first.
const usage = `oddsfeed runs the feedkit SDK on a simulated odds feed for about 10 seconds, through
an outage and its recovery, prints what happens and a summary, and checks that every
message sent was received, each match's live messages in order. Its last line is the
verdict, OK or FAILED, and its exit status 0 or 1 to match.

Usage: oddsfeed [flags]    (from the repository: go run ./examples/oddsfeed [flags])

Flags:
`

type options struct {
	duration time.Duration
	matches  int
	rate     float64
	progress time.Duration
	seed     uint64
	amqpURL  string
	exchange string
	threads  int
	outage   time.Duration
	state    string
	restart  time.Duration
	stall    time.Duration
	names    string
	http     string
}

// The demo's timings: alives every 100 ms, a producer is down after 500 ms without one,
// checked every 100 ms (the feed's are 10 s, 15 s and 15 s).
const (
	aliveInterval  = 100 * time.Millisecond
	heartbeatLimit = 500 * time.Millisecond
	checkInterval  = 100 * time.Millisecond
)

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("oddsfeed", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, usage)
		fs.PrintDefaults()
	}
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long the simulator publishes, at least (longer if a recovery is still under way then)")
	fs.IntVar(&o.matches, "matches", 100, "matches running at any time")
	fs.Float64Var(&o.rate, "rate", 2000, "event messages per second (0: as fast as possible)")
	fs.DurationVar(&o.progress, "progress", time.Second, "interval between progress lines")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the simulated traffic")
	fs.StringVar(&o.amqpURL, "amqp", "", "RabbitMQ URL (amqp://user:pass@host:port/vhost); empty: the embedded broker")
	fs.StringVar(&o.exchange, "exchange", rabbitmq.DefaultExchange, "with -amqp: the topic exchange to publish to and consume from")
	fs.IntVar(&o.threads, "threads", concurrent.DefaultThreads, "workers of the concurrent listener (0: serial delivery)")
	fs.DurationVar(&o.outage, "outage", time.Second, "length of the feed outage a third of the way in (0: none)")
	fs.StringVar(&o.state, "state", "", "where the producer records are kept: a file, or a PostgreSQL URL (postgres://...); empty: in memory, gone when the process stops")
	fs.DurationVar(&o.restart, "restart", 0, "two thirds of the way in, stop the process for this long in the feed's time, then start it again (0: no restart)")
	fs.StringVar(&o.names, "names", "", "name the markets and outcomes of every bet settlement in this language (en, de), from the simulator's Sports API; empty: ids only")
	fs.StringVar(&o.http, "http", "", "serve the SDK's probes, metrics and counters on this address while running (/healthz, /readyz, /metrics, /stats; e.g. 127.0.0.1:8080); empty: none")
	fs.DurationVar(&o.stall, "stall", stallLimit, "at the end, how long to wait with no message arriving before counting what is still missing as lost (never received)")
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
	case o.outage < 0:
		return o, fmt.Errorf("-outage %v must not be negative", o.outage)
	case o.outage > 0 && o.outage < 2*heartbeatLimit:
		return o, fmt.Errorf("-outage %v must be at least %v, for the producer to be found down", o.outage, 2*heartbeatLimit)
	case o.restart < 0:
		return o, fmt.Errorf("-restart %v must not be negative", o.restart)
	case o.stall <= 0:
		return o, fmt.Errorf("-stall %v must be positive", o.stall)
	case o.names != "" && !validLanguage(o.names):
		return o, fmt.Errorf("-names %q: want a language code such as en or de", o.names)
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
	state, err := openState(ctx, o.state)
	if err != nil {
		return err
	}
	defer state.close()
	link, err := connect(ctx, o)
	if err != nil {
		return err
	}
	defer link.close()
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	// The simulator keeps what a recovery after the outage or the restart replays, and not
	// much more, so that the run's memory stays flat however long it lasts.
	// A restart's recovery goes back over the stop, and over the time the process took
	// to stop and start again, however slow the machine.
	history, historyBytes := max(o.outage+5*time.Second, o.restart+time.Minute), 0 // 0: the simulator's default
	if o.rate == feedtest.Unlimited && (o.outage > 0 || o.restart > 0) {
		// At 100,000 messages a second the default bytes hold less than the outage.
		historyBytes = 256 << 20
	}
	clk := newFeedClock()
	ledger := newLedger(link.pub, history)
	sim, err := feedtest.NewSimulator(ledger, feedtest.SimulatorConfig{
		Matches: o.matches, Rate: o.rate, Seed: o.seed, AliveInterval: aliveInterval,
		Producers: []feed.Producer{lo}, HistoryAge: history, HistoryBytes: historyBytes, Clock: clk,
	})
	if err != nil {
		return err
	}
	// The simulator's API: the account (whoami), its producers, and the recoveries.
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	defer api.Close()
	// The SDK is set up as an operator sets it up: from an access token and an
	// environment, here a custom one whose API is the simulator's. Open reads the account
	// (whoami) and its producers from that API, so the producer followed is the one the
	// simulator feeds, and no list of producers is configured. The broker is given as
	// Config.Transport, which replaces the environment's: the embedded broker has no
	// address, and the -amqp broker takes the URL's user and virtual host, where an
	// environment's broker logs in with the token.
	env := feedkit.CustomEnvironment("", api.URL)

	start := time.Now()
	tally := newTally(out, start, ledger, o.names)
	var workers *concurrent.Config // serial delivery
	if o.threads > 0 {
		workers = &concurrent.Config{Threads: o.threads}
	}
	cfg := feedkit.Config{
		Environment: &env,
		AccessToken: feedtest.DefaultAccessToken,
		Transport:   link.transport,
		Node:        feed.Node(1),
		Global:      tally.timeline,
		Recovery: recovery.Config{
			HeartbeatLimits: map[int]time.Duration{lo.ID: heartbeatLimit},
			CheckInterval:   checkInterval,
			Store:           state.store,
		},
		Clock:      clk,
		Concurrent: workers,
		OnError:    tally.onError,
	}
	proc := &process{cfg: cfg, listener: tally, timeline: tally.timeline, built: func(sdk *feedkit.SDK) { tally.namer.names.Store(sdk.Names()) }}
	// The header is printed once Open has read the account's producers; what the SDK
	// reports meanwhile is held back until then.
	head := header(o, link, state)
	if o.http != "" {
		addr, stop, err := serve(o.http, statusHandler(proc))
		if err != nil {
			return fmt.Errorf("-http %s: %w", o.http, err)
		}
		defer stop()
		head += headerLine("http", "probes, metrics and counters on http://"+addr+" (/healthz, /readyz, /metrics, /stats)")
	}
	if err := proc.start(ctx); err != nil {
		tally.timeline.begin(head + "\n")
		if ctx.Err() != nil {
			return nil // interrupted before the feed began: nothing to tell
		}
		return err
	}
	// Whatever ends the run early, the SDK is closed (a second Close does nothing).
	defer proc.stop(context.Background())
	tally.timeline.begin(head + headerLine("set up", fmt.Sprintf("from a token on the %s environment (the simulator's API); producers of the account: %s",
		env.Name, producerIDs(proc.sdk.Producers()))) + "\n")

	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Run(simCtx) }()
	rs := &restart{o: o, proc: proc, state: state, producer: lo.ID, clock: clk, ledger: ledger, tl: tally.timeline}
	if err := script(ctx, o, newOutage(o, sim, link, lo.ID, tally.timeline), rs, tally, simDone); err != nil {
		return err
	}
	stopSim()
	if err := <-simDone; err != nil && ctx.Err() == nil {
		return err
	}
	// The simulator has stopped (its time is up, or Ctrl-C): what it published is in the
	// broker or the SDK. Deliver it all before closing, even after an interrupt, so that
	// the summary is complete. The wait ends early only if delivery stalls (-stall).
	done := context.WithoutCancel(ctx)
	if err := link.flush(done); err != nil {
		return err
	}
	sim.WaitReplays()
	waitForTheRest(done, ledger, tally.timeline, o.stall)
	elapsed := time.Since(start)
	closing, cancel := context.WithTimeout(done, 30*time.Second)
	defer cancel()
	if err := proc.stop(closing); err != nil {
		return err
	}
	return summarize(out, tally, proc.stats, o.restart > 0, elapsed)
}

// script runs the feed for at least -duration, through its events rather than a
// stopwatch: once a third of it has passed and the producer is up, the outage begins;
// it ends once it has lasted -outage and the producer was found down. Once two thirds
// have passed and the producer is up again, the process restarts (-restart). The run
// ends once -duration has passed and the producer is up again after the outage and the
// restart, whatever the speed of the machine. It returns nil when the run is over or
// interrupted, or the simulator's error.
func script(ctx context.Context, o options, outage *outage, rs *restart, t *tally, simDone <-chan error) error {
	tl := t.timeline
	var begin, end, again <-chan time.Time
	if o.outage > 0 {
		begin = time.After(o.duration / 3)
	}
	if o.restart > 0 {
		again = time.After(2 * o.duration / 3)
	}
	finish := time.After(o.duration)
	ticker := time.NewTicker(o.progress)
	defer ticker.Stop()
	var beginDue, endDue, againDue, finishDue bool
	last, lastAt := 0, time.Now()
	for {
		select {
		case <-ticker.C:
			n, now := t.total(), time.Now()
			tl.printf("received %8d  %8.0f/s  unparsable %d  errors %d",
				n, float64(n-last)/now.Sub(lastAt).Seconds(), t.unparsableCount(), t.errorCount())
			last, lastAt = n, now
			t.ledger.forgetIdle(now)
		case <-begin:
			begin, beginDue = nil, true
		case <-end:
			end, endDue = nil, true
		case <-again:
			again, againDue = nil, true
		case <-finish:
			finish, finishDue = nil, true
		case <-tl.changed:
		case err := <-simDone:
			return err // the simulator stopped on its own: a publishing error
		case <-ctx.Done():
			tl.printf("interrupted: the feed stops here; what it sent is still accounted for")
			outage.stop()
			return nil
		}
		up, _ := tl.producer()
		if beginDue && !outage.started && up {
			outage.start()
			end = time.After(o.outage)
		}
		if endDue && !outage.stopped && !up {
			outage.stop()
		}
		outageOver := o.outage == 0 || outage.recovered()
		if againDue && !rs.done && up && outageOver {
			if err := rs.run(ctx); err != nil {
				return err
			}
		}
		if finishDue && outageOver && (o.restart == 0 || rs.recovered()) {
			return nil
		}
	}
}

// waitForTheRest waits for the messages still on their way once the feed has stopped,
// and says so: how many, for how long, and how the wait ended. It gives up once none has
// arrived for stall; what is then missing counts as lost.
func waitForTheRest(ctx context.Context, l *ledger, tl *timeline, stall time.Duration) {
	n := l.outstanding()
	if n == 0 {
		return
	}
	tl.printf("the feed has stopped: waiting for %s still on the way (giving up once none has arrived for %v)...", plural(n, "message"), stall)
	began := time.Now()
	l.wait(ctx, stall)
	if n := l.outstanding(); n > 0 {
		tl.printf("gave up after %.1fs: %s still missing", time.Since(began).Seconds(), plural(n, "message"))
	} else {
		tl.printf("all arrived, in %.2fs", time.Since(began).Seconds())
	}
}

// plural says how many things there are: "1 message", "2 messages".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// stallLimit is how long the end of a run waits for a message while some are still on
// their way: longer than any pause of a busy machine, so that what it then counts as lost
// is lost.
const stallLimit = time.Minute

// producerIDs lists the producers the SDK follows, which Open read from the API.
func producerIDs(ps []recovery.ProducerState) string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = strconv.Itoa(p.Producer)
	}
	return strings.Join(ids, ", ")
}

// header says what the run is, before anything happens in it: the feed, the listener,
// the outage, the restart and where the producer records are kept.
func header(o options, l link, st stateStore) string {
	rate := fmt.Sprintf("%.0f event messages/s", o.rate)
	if o.rate == feedtest.Unlimited {
		rate = "event messages as fast as it can"
	}
	listener := fmt.Sprintf("%d workers: matches in parallel, each match's messages in order", o.threads)
	if o.threads == 0 {
		listener = "serial delivery: one message at a time"
	}
	outage := "none"
	switch {
	case o.outage > 0 && l.broker != nil:
		outage = fmt.Sprintf("%v, a third of the way in: the producer's alives stop and the connection drops", o.outage)
	case o.outage > 0:
		outage = fmt.Sprintf("%v, a third of the way in: the producer's alives stop (the connection stays up)", o.outage)
	}
	restart := "none"
	if o.restart > 0 {
		restart = fmt.Sprintf("two thirds of the way in, the process stops for %v of the feed's time", o.restart)
	}
	return fmt.Sprintf("oddsfeed: the feedkit SDK on a simulated odds feed for %v (longer if a recovery is still under way then)\n", o.duration) +
		headerLine("feed", fmt.Sprintf("%d matches at a time, %s, on %s", o.matches, rate, l.where)) +
		headerLine("listener", listener) +
		headerLine("outage", outage) +
		headerLine("restart", restart) +
		headerLine("records", "producer records in "+st.where)
}

func headerLine(label, text string) string { return fmt.Sprintf("  %-9s  %s\n", label, text) }

// link is the broker the example runs on.
type link struct {
	transport feed.Transport
	pub       feedtest.Publisher
	where     string
	broker    *feedtest.Broker // nil on RabbitMQ
	close     func()
	flush     func(context.Context) error
}

// connect returns the transport the SDK consumes from and the publisher the simulator
// feeds: the embedded broker, or RabbitMQ with -amqp.
func connect(ctx context.Context, o options) (link, error) {
	if o.amqpURL == "" {
		b := feedtest.NewBroker(feedtest.BrokerOptions{})
		return link{transport: b, pub: b, where: "the embedded broker", broker: b, close: b.Close,
			flush: func(context.Context) error { return nil }}, nil
	}
	cfg := rabbitmq.Config{URL: o.amqpURL, Exchange: o.exchange, DeclareExchange: true, ConnectionName: "feedkit-oddsfeed"}
	t, err := rabbitmq.New(cfg)
	if err != nil {
		return link{}, err
	}
	cfg.ConnectionName = "feedkit-oddsfeed-simulator"
	p, err := rabbitmq.NewPublisher(ctx, cfg)
	if err != nil {
		return link{}, err
	}
	return link{transport: t, pub: wholeWrites{p}, where: fmt.Sprintf("RabbitMQ (exchange %s)", o.exchange),
		close: func() { _ = p.Close(context.Background()) }, flush: p.Flush}, nil
}

// wholeWrites lets a publish under way finish when the simulator's time is up: a write
// cut short leaves the publisher's connection unusable, and the final flush would fail.
// The simulator still stops at once, as it checks its context before each message.
type wholeWrites struct{ *rabbitmq.Publisher }

func (w wholeWrites) Publish(ctx context.Context, key string, body []byte) error {
	return w.Publisher.Publish(context.WithoutCancel(ctx), key, body)
}

// summarize prints the summary of the whole run: the ledger's accounts of what was sent,
// what the listener received, and the SDK's figures, summed over the processes of
// -restart.
func summarize(out io.Writer, t *tally, st figures, restarted bool, elapsed time.Duration) error {
	acc := t.ledger.accounts()
	if restarted {
		fmt.Fprintln(out, "\nsummary of the whole run, both processes")
	} else {
		fmt.Fprintln(out, "\nsummary of the whole run")
	}
	line := func(label string, v any) { fmt.Fprintf(out, "  %-46s %10v\n", label, v) }
	line("event messages sent", acc.sent)
	line("  received live", acc.live)
	line("  not delivered live, recovered by replay", acc.recovered)
	line("  lost (never received)", acc.lost)
	if n := len(acc.firstLost); n > 0 {
		if n < acc.lost {
			fmt.Fprintf(out, "      the first %d of them:\n", n)
		}
		for _, m := range acc.firstLost {
			fmt.Fprintf(out, "        %s %s stamped %s, published %.3fs in\n", m.event, m.typ, stamp(m.stamp), m.sent.Sub(t.timeline.start).Seconds())
		}
	}
	line("live messages out of order (within a match)", acc.reordered)
	line("event messages received", t.total())
	line("  replayed by a recovery", t.replayedCount())
	line("  received more than once", acc.duplicates)
	fmt.Fprintln(out, "      (a recovery replays the feed from the last point known safe, before the")
	fmt.Fprintln(out, "      interruption or the start, so it repeats messages the listener already had:")
	fmt.Fprintln(out, "      listeners must be idempotent)")
	fmt.Fprintln(out, "  event messages received, by type")
	for _, tc := range t.typeCounts() {
		line("  "+tc.typ.String(), tc.n)
	}
	line("distinct matches", acc.matches)
	line("system messages", st.system)
	line("connections dropped", st.connectionDowns)
	line("recoveries requested", st.requested)
	line("recoveries completed", st.completed)
	line("producer ups held back for replayed messages", st.deferred)
	line("unparsable messages", t.unparsableCount())
	line("errors reported", t.errorCount())
	if t.namer.lang != "" {
		named, failed, first := t.namer.counts()
		line("names taken ("+t.namer.lang+")", named)
		line("names not found", failed)
		if first != nil {
			fmt.Fprintf(out, "      first name not found: %v\n", first)
		}
	}
	if w := st.workers; w != nil {
		line("messages per worker", fmt.Sprintf("%d–%d", minOf(w), maxOf(w)))
	}
	line("elapsed", fmt.Sprintf("%.2fs", elapsed.Seconds()))
	if n, last := t.lastReceived(); n > 0 {
		line("received per second, until the last arrived", fmt.Sprintf("%.0f", float64(n)/last.Sub(t.timeline.start).Seconds()))
	}
	return verdict(out, acc)
}

// errFailed is the error of a run whose verdict is FAILED: the verdict says why.
var errFailed = errors.New("the run failed: messages were lost or reordered")

// verdict prints the run's last line, whether every message sent was received and each
// match's live messages in order, and returns errFailed if not.
func verdict(out io.Writer, acc accounts) error {
	switch {
	case acc.lost == 0 && acc.reordered == 0 && acc.recovered == 0:
		fmt.Fprintf(out, "\nOK: every one of %d event messages sent was received live, each match's in order\n", acc.sent)
		return nil
	case acc.lost == 0 && acc.reordered == 0:
		fmt.Fprintf(out, "\nOK: every one of %d event messages sent was received (%d of them recovered by replay), each match's live messages in order\n",
			acc.sent, acc.recovered)
		return nil
	}
	var what []string
	if acc.lost > 0 {
		what = append(what, fmt.Sprintf("%d of %d event messages sent were lost (never received)", acc.lost, acc.sent))
	}
	if acc.reordered > 0 {
		what = append(what, fmt.Sprintf("%d live messages arrived out of order within their match", acc.reordered))
	}
	fmt.Fprintf(out, "\nFAILED: %s\n", strings.Join(what, "; "))
	return errFailed
}

func minOf(xs []uint64) uint64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []uint64) uint64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// validLanguage accepts a language code such as en, de or zht.
func validLanguage(s string) bool {
	if len(s) < 2 || len(s) > 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
