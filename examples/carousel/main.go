// Command carousel runs a publish carousel: it republishes a demo collection to an HTTP
// notifier, in cycles of the three types, and serves the operator API, the status page
// and its metrics for Prometheus (/metrics, promfeedkit's feedkit_carousel_*) while it
// runs.
//
// By default everything is in the process: the collections are in memory, progress is
// saved to a JSON file, and the notifier is a local HTTP endpoint that counts what it
// receives, and by the X-Carousel-Cycle and -Iteration headers the items it received
// again in the same iteration (what a restart or a failover republishes). With -pg the collections are PostgreSQL tables (created and filled when
// missing), progress is saved in PostgreSQL, and a lease makes one of several instances
// active:
//
//	go run ./examples/carousel                        # until Ctrl-C; open http://127.0.0.1:8080/
//	go run ./examples/carousel -for 10s               # then print a summary and exit
//	go run ./examples/carousel -pg "$FEEDKIT_PG_URL"  # a second one started alike stays passive
//
// While it runs, an editor modifies a random item every -edit, so the windowed cycles
// have new items to republish, and a line every -progress says how many items each
// cycle has republished so far. At the end it prints where every cycle stopped and what
// the notifier received, then a verdict, "OK: ..." or "FAILED: ...", and exits 1 when
// an active instance republished nothing or the notifier refused something.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

//go:embed cycles.yml
var defaultCycles []byte

// options are the command line's.
type options struct {
	addr      string        // the operator API's address
	config    string        // a cycles YAML file; "" is the embedded cycles.yml
	pgURL     string        // PostgreSQL, instead of memory and a file
	notifier  string        // where to POST; "" starts a local notifier
	metadata  string        // the metadata file without -pg; "" is one in a temporary directory
	duration  time.Duration // how long to run; 0 is until interrupted
	editEvery time.Duration // how often the editor modifies an item
	progress  time.Duration // how often to print a progress line; 0: never
	failover  bool          // with -pg: take over by itself when the active instance goes
	verbose   bool
	// until, when not nil, ends the run once it returns true. It is called after each
	// successful republication with how many each cycle has made so far. (For tests: a
	// run ended by what happened in it, not by how long it took.)
	until func(republished map[string]int) bool
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
		fmt.Fprintln(stderr, "carousel:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, stdout, stderr); err != nil {
		if !errors.As(err, new(reported)) { // a verdict says it already
			fmt.Fprintln(stderr, "carousel:", err)
		}
		return 1
	}
	return 0
}

// usage is what -h prints before the flags: what the program does, then how to call it.
const usage = `Carousel republishes two demo collections (articles and videos) to an HTTP notifier
in three cycles, printing its progress as it goes, and serves the operator API, a
status page and its metrics (/metrics) while it runs; at the end it prints what each cycle did and what the
notifier received.

Usage: carousel [flags]

Flags:
`

// parseFlags reads the command line; -h, and a bad flag, print the usage to out.
func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("carousel", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`address` of the operator API, the status page and /metrics")
	fs.StringVar(&o.config, "config", "", "cycles YAML `file` (default: the embedded cycles.yml)")
	fs.StringVar(&o.pgURL, "pg", "", "PostgreSQL `URL`: read the collections from tables, save progress there, and hold a lease")
	fs.StringVar(&o.notifier, "notifier", "", "`URL` to POST republished items to (default: a local notifier that counts them)")
	fs.StringVar(&o.metadata, "metadata", "", "progress `file` without -pg (default: a new one in a temporary directory)")
	fs.DurationVar(&o.duration, "for", 0, "run this long, then print a summary (default: until interrupted)")
	fs.DurationVar(&o.editEvery, "edit", time.Second, "modify a random item this often")
	fs.DurationVar(&o.progress, "progress", 2*time.Second, "print a line saying what has been republished this often (0: never)")
	fs.BoolVar(&o.failover, "failover", false, "with -pg: become active by itself when the active instance goes")
	fs.BoolVar(&o.verbose, "v", false, "also log the scheduler's and cycles' routine events (activation, progress restored, a source reachable again); warnings are logged without it")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.editEvery <= 0:
		return o, fmt.Errorf("-edit %v must be positive", o.editEvery)
	case o.progress < 0:
		return o, fmt.Errorf("-progress %v must not be negative", o.progress)
	}
	return o, nil
}

// run runs the carousel until ctx ends, o.duration has passed or o.until is satisfied,
// then prints the summary to out, ending with a verdict: "OK: ..." or "FAILED: ...". It
// returns an error when something failed to start, nothing was republished by an
// active instance, or the notifier refused a request.
func run(ctx context.Context, o options, out, logOut io.Writer) error {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	if o.metadata == "" && o.pgURL == "" {
		dir, err := os.MkdirTemp("", "carousel-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.metadata = filepath.Join(dir, "metadata.json")
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	if until := o.until; until != nil {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		o.until = func(republished map[string]int) bool {
			done := until(republished)
			if done {
				stop()
			}
			return done
		}
	}

	d, err := assemble(ctx, o, log)
	if err != nil {
		return err
	}
	defer d.close()
	fmt.Fprintf(out, "operator API and status page: http://%s/  (metrics: http://%s/metrics)\n", d.apiAddr, d.apiAddr)
	fmt.Fprintf(out, "republishing to %s (%s)\n", d.notifierURL, d.storage)

	err = d.run(ctx, out)
	return printSummary(out, outcome{status: d.scheduler.Status(), republished: d.published.counts(), failed: d.published.failures(), got: d.received(),
		local: d.local, leased: o.pgURL != "", notifierURL: d.notifierURL, err: err})
}
