// Command locksensors is the lock-sensor notification service: door-lock sensors send
// readings, {"sensor_id": "xa7v9Dfadr7H", "data": 1, "ts": 1764000000}, through a
// queue; the service keeps every sensor's state and history, and tells the clients
// linked to a sensor when its lock changes state ("changed"), when it has been silent
// for an hour ("lost") and when it is heard again ("restored"), by POSTing JSON to
// their URLs, with durable retries. Operators register sensors, clients and links
// through an HTTP API, which also serves the service's metrics for Prometheus at
// /metrics (readings by outcome, notifications created, attempts by outcome and their
// durations, sensors lost and restored, store errors; see metrics.go).
//
// By default everything is in the process: the store is in memory, readings come
// through an in-process queue, and a simulator plays sensors (one of which falls silent
// for a while, and a few of which send bad readings) and two clients (one of which
// fails its first requests):
//
//	go run ./examples/locksensors -for 15s   # then print a summary and exit
//	go run ./examples/locksensors            # until Ctrl-C; the API at http://127.0.0.1:8090/,
//	                                         # its metrics at http://127.0.0.1:8090/metrics
//
// For real, on PostgreSQL and RabbitMQ (schema migrations run at start; several
// instances may share both):
//
//	go run ./examples/locksensors -pg "$FEEDKIT_PG_URL" -amqp "$FEEDKIT_AMQP_URL" -simulate=false
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options are the command line's.
type options struct {
	addr      string
	pgURL     string
	amqpURL   string
	queue     string
	consumers int
	prefetch  int
	batch     int
	silence   time.Duration
	retry     string
	retryUnit time.Duration
	attempts  int
	simulate  bool
	sensors   int
	every     time.Duration
	duration  time.Duration
	verbose   bool
}

func main() {
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// command runs the program with the command line's arguments and returns its exit
// status: 0 after -h, which prints the usage, and 1 for a bad flag or a failed run.
func command(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "locksensors:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal stops the service (with -simulate, once it has settled, for the
	// summary); a second one ends the process at once.
	context.AfterFunc(ctx, stop)
	if err := run(ctx, o, stdout, stderr); err != nil {
		if !errors.As(err, new(reported)) { // a verdict says it already
			fmt.Fprintln(stderr, "locksensors:", err)
		}
		return 1
	}
	return 0
}

// usage is what -h prints before the flags: what the program does, then how to call it.
const usage = `Locksensors runs the lock-sensor notification service: it stores the readings that
door-lock sensors send through a queue and POSTs to the clients linked to a sensor when
its lock changes state, when it falls silent ("lost") and when it is heard again
("restored"). By default it also plays the sensors and two clients, and at the end
checks that every client knows the latest state of every sensor it is linked to.

Operators register sensors, clients and links through its HTTP API at -addr, which
also serves the service's metrics for Prometheus at /metrics.

Usage: locksensors [flags]

Flags:
`

// parseFlags reads the command line; -h, and a bad flag, print the usage to out.
func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("locksensors", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8090", "`address` of the operator API and of its /metrics")
	fs.StringVar(&o.pgURL, "pg", "", "PostgreSQL `URL` (default: keep everything in memory)")
	fs.StringVar(&o.amqpURL, "amqp", "", "RabbitMQ `URL` to read readings from (default: an in-process queue)")
	fs.StringVar(&o.queue, "queue", "", "RabbitMQ `queue` (default lock-readings)")
	fs.IntVar(&o.consumers, "consumers", 0, "queue consumers (default 4 on RabbitMQ, 2 in process)")
	fs.IntVar(&o.prefetch, "prefetch", 0, "RabbitMQ prefetch per consumer (default 500)")
	fs.IntVar(&o.batch, "batch", 0, "most readings stored in one write (default 250)")
	fs.DurationVar(&o.silence, "silence", 0, "report a sensor lost once it has sent nothing for this long (default: 3s while simulating, so that you see a loss; 1h with -simulate=false)")
	fs.StringVar(&o.retry, "retry", "exp", "retry schedule: exp (capped exponential with jitter) or log (the logarithmic one)")
	fs.DurationVar(&o.retryUnit, "retry-unit", time.Second, "the retry schedule's first delay")
	fs.IntVar(&o.attempts, "attempts", 10, "attempts per notification before it is dead")
	fs.BoolVar(&o.simulate, "simulate", true, "play sensors and clients (registering them)")
	fs.IntVar(&o.sensors, "sensors", 12, "with -simulate: how many sensors")
	fs.DurationVar(&o.every, "every", 200*time.Millisecond, "with -simulate: how often each sensor sends a reading")
	fs.DurationVar(&o.duration, "for", 0, "run this long, then print a summary (default: until interrupted)")
	fs.BoolVar(&o.verbose, "v", false, "log every refused reading, loss and dead notification")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	silenceSet := false
	fs.Visit(func(f *flag.Flag) { silenceSet = silenceSet || f.Name == "silence" })
	switch {
	case o.silence < 0:
		return o, fmt.Errorf("-silence %v must not be negative", o.silence)
	case silenceSet:
	case o.simulate:
		o.silence = 3 * time.Second // so that the simulated silence is found while you watch
	default:
		o.silence = time.Hour
	}
	return o, nil
}

// run runs the service until ctx ends or o.duration has passed. With o.simulate it
// then prints what the simulation sent and what the clients received, and returns an
// error when the service did not do what it should have.
func run(ctx context.Context, o options, out, logOut io.Writer) error {
	level := slog.LevelWarn // refused readings, dead notifications, store errors
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	schedule, err := retrySchedule(o.retry, o.retryUnit)
	if err != nil {
		return err
	}
	svc, err := newService(ctx, serviceConfig{pgURL: o.pgURL, amqpURL: o.amqpURL, queue: o.queue,
		consumers: o.consumers, prefetch: o.prefetch, batchSize: o.batch, silence: o.silence,
		schedule: schedule, maxAttempts: o.attempts, logger: log})
	if err != nil {
		return err
	}
	defer svc.close()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	fmt.Fprintf(out, "operator API: http://%[1]s/sensors  (metrics: http://%[1]s/metrics; store: %[2]s, queue: %[3]s)\n",
		ln.Addr(), label(o.pgURL, "PostgreSQL", "memory"), label(o.amqpURL, "RabbitMQ", "in process"))

	// Not ended by ctx: with -simulate, the service keeps running while the simulation
	// settles, so that the verdict judges what it did, not where a stop interrupted it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- svc.run(runCtx, ln) }()

	var sim *simulation
	if o.simulate {
		if sim, err = startSimulation(runCtx, svc, o, out); err != nil {
			cancel()
			return errors.Join(err, <-done)
		}
	}
	timeout := make(<-chan time.Time)
	if o.duration > 0 {
		timeout = time.After(o.duration)
	}
	select {
	case <-ctx.Done():
	case <-timeout:
	case err := <-done:
		return fmt.Errorf("the service stopped: %w", err)
	}
	var problems []error
	if sim != nil {
		problems = sim.finish(runCtx, out)
	}
	cancel()
	if err := <-done; err != nil {
		problems = append(problems, fmt.Errorf("the service stopped: %w", err))
	}
	ok := "OK: every client knows the latest state of every sensor it is linked to"
	if sim == nil { // nothing to check: say what it did, and that it stopped cleanly
		st := svc.stats()
		fmt.Fprintf(out, "Stored %d readings and refused %d bad messages; delivered %d notifications; %s still pending.\n",
			st.Ingest.Readings, st.Ingest.Rejected, st.Notify.Delivered, pendingCount(st.Pending))
		ok = "OK: the service stopped cleanly"
	}
	return verdict(out, ok, problems)
}

// verdict prints the run's last line: ok, or each problem and then "FAILED: ...". It
// returns the problems, as told already.
func verdict(out io.Writer, ok string, problems []error) error {
	switch len(problems) {
	case 0:
		fmt.Fprintln(out, ok)
		return nil
	case 1:
		fmt.Fprintf(out, "FAILED: %v\n", problems[0])
	default:
		for _, p := range problems {
			fmt.Fprintf(out, "problem: %v\n", p)
		}
		fmt.Fprintf(out, "FAILED: %d problems, listed above\n", len(problems))
	}
	return reported{errors.Join(problems...)}
}

// reported is a run's failure that its verdict has printed already.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// label names what a URL flag chose, without printing the URL's credentials.
func label(url, set, unset string) string {
	if url == "" {
		return unset
	}
	return set
}
