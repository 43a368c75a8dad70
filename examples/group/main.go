// Command group runs the feed through a group of processes on RabbitMQ (package group):
// the simulator as the feed, an ingress that reads it and shares it out over K shard
// queues, and workers that deliver each shard's messages to the application's listener.
// Each is a process of its own, started by -role; the default, -role all, starts them
// all as children of itself, prints their output prefixed by name, and ends with a
// summary and a verdict.
//
//	export FEEDKIT_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/
//	go run ./examples/group                          # the feed, an ingress, 2 workers on 4 shards, 20 s
//	go run ./examples/group -pg "$FEEDKIT_PG_URL"    # two ingresses on a lease: the active one stops two thirds in
//	go run ./examples/group -workers 4 -work 1ms     # a listener that takes 1 ms a message
//
// Or each process in a terminal of its own:
//
//	go run ./examples/group -role feed                   # the simulator; its API on 127.0.0.1:8091
//	go run ./examples/group -role ingress -shards 4
//	go run ./examples/group -role worker -shards 0,1 -of 4
//	go run ./examples/group -role worker -shards 2,3 -of 4
//	go run ./examples/group -role single                 # the same listener in one process
//
// The feed publishes to the exchange feed.sim (-exchange) of the broker, as the
// feed's own broker would; the group's exchanges and queues are named groupdemo.*
// (-prefix), on the same broker unless -group-amqp names another.
//
// The listener (counter, in listener.go) is the one a single-process program would
// give feedkit.SDK.AddSession: -role single does that, -role worker gives it to
// group.NewWorker. Moving from one process to a group changes the configuration, not
// the listener.
//
// -role all runs the story: a third of the way in the feed has an outage (the
// producer's alives stop for -outage), and the producer goes down and comes back up
// after its recovery on every worker. With -pg, two ingresses share a lease in
// PostgreSQL and the recovery point; two thirds of the way in, once the producer is up
// again, the active ingress is stopped and the standby takes over, resuming from the
// saved recovery point. At -duration (or later, once the producer is up again after the
// outage and the fail-over), the feed stops and prints how many messages it sent; once
// the workers have processed them, the ingresses and the workers stop, each worker
// printing what it processed. The last line is the verdict: OK when every worker saw the
// producer up after each of these, and the workers together processed at least as many
// messages as the feed sent live; else FAILED and why. The exit status is 0 or 1 to
// match.
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/feedkit/feedkit/group"
)

func main() {
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// command runs the program with the command line's arguments and returns its exit
// status: 0 after -h, or after a run that ended well (a role stopped by a signal, or
// -role all with the verdict OK); 1 for a bad flag, an error, or the verdict FAILED.
func command(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C (or SIGTERM) stops the run in order; a second one ends the
	// program at once.
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errFailed):
		return 1 // the verdict, the last line printed, says why
	case err != nil:
		fmt.Fprintln(stderr, "group:", err)
		return 1
	}
	return 0
}

// usage is what -h prints before the flags.
const usage = `group runs the feed through a group of processes on RabbitMQ: the simulator as the
feed, an ingress that shares it out over shard queues, and workers that deliver each
shard to the application's listener. -role all (the default) starts them all as child
processes, runs the feed through an outage (and, with -pg, an ingress fail-over), and
ends with a summary and a verdict, OK or FAILED, its exit status 0 or 1 to match.

Usage: group [flags]    (from the repository: go run ./examples/group [flags])

Roles:
  all      the feed, the ingresses and the workers below, as child processes
  feed     the simulator, publishing to -exchange; its API on -listen
  ingress  reads the feed (-exchange, -api) and shares it out over -shards K queues
  worker   delivers the shards -shards (e.g. 0,1) of the group's -of K to the listener
  single   the same listener in one process: the plain SDK on the feed

Flags:
`

// Roles.
const (
	roleAll     = "all"
	roleFeed    = "feed"
	roleIngress = "ingress"
	roleWorker  = "worker"
	roleSingle  = "single"
)

// The demo's timings: alives every 200 ms, and a producer down after 2 s without one,
// checked every 100 ms (the feed's are 10 s, 15 s and 15 s). 2 s, not less: a busy
// machine running several processes delays an alive by a second at times.
const (
	aliveInterval  = 200 * time.Millisecond
	heartbeatLimit = 2 * time.Second
	checkInterval  = 100 * time.Millisecond
)

// defaultListen is where -role feed serves the simulator's API, and so where the other
// roles look for it by default.
const defaultListen = "127.0.0.1:8091"

type options struct {
	role      string
	amqpURL   string
	groupAMQP string
	exchange  string
	prefix    string
	shards    string
	of        int
	api       string
	listen    string
	pg        string
	rate      float64
	matches   int
	seed      uint64
	outage    time.Duration
	outageAt  time.Duration
	duration  time.Duration
	workers   int
	threads   int
	work      time.Duration
	progress  time.Duration
	drain     time.Duration
	http      string

	k      int   // the group's number of shards: -shards for ingress and all, -of for worker
	consum []int // the worker's shards
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("group", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.role, "role", roleAll, "what this process is: all, feed, ingress, worker or single")
	fs.StringVar(&o.amqpURL, "amqp", "", "RabbitMQ URL of the feed (amqp://user:pass@host:port/vhost); unset: $FEEDKIT_AMQP_URL")
	fs.StringVar(&o.groupAMQP, "group-amqp", "", "RabbitMQ URL of the group's exchanges and queues, the operator's own broker; empty: -amqp")
	fs.StringVar(&o.exchange, "exchange", "feed.sim", "the topic exchange the feed publishes to")
	fs.StringVar(&o.prefix, "prefix", "groupdemo", "the prefix of the group's exchanges and queues (group.Topology.Prefix)")
	fs.StringVar(&o.shards, "shards", "", "ingress, all: how many shard queues the group has, K (default 4); worker: the shards it consumes, e.g. 0,1 (default all of -of)")
	fs.IntVar(&o.of, "of", 4, "worker: how many shard queues the group has (the ingress's -shards)")
	fs.StringVar(&o.api, "api", "http://"+defaultListen, "ingress, single: the feed's API (the simulator's, which -role feed serves)")
	fs.StringVar(&o.listen, "listen", defaultListen, "feed: the address of the simulator's API")
	fs.StringVar(&o.pg, "pg", "", "ingress, single, all: PostgreSQL URL (postgres://...) of the recovery point and the ingresses' lease; unset: $FEEDKIT_PG_URL; empty: in memory, and one ingress")
	fs.Float64Var(&o.rate, "rate", 1000, "feed, all: event messages per second")
	fs.IntVar(&o.matches, "matches", 50, "feed, all: matches running at any time")
	fs.Uint64Var(&o.seed, "seed", 1, "feed, all: seed of the simulated traffic")
	fs.DurationVar(&o.outage, "outage", 2*heartbeatLimit, "feed, all: how long the producer's alives stop (0: no outage)")
	fs.DurationVar(&o.outageAt, "outage-at", 10*time.Second, "feed: when the outage begins (all: a third of -duration)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "all: how long the feed runs, at least (longer until the producer is up again after the outage and the fail-over)")
	fs.IntVar(&o.workers, "workers", 2, "all: how many worker processes share the shards")
	fs.IntVar(&o.threads, "threads", 10, "worker, single: the listener's concurrent workers (matches in parallel, each match's messages in order)")
	fs.DurationVar(&o.work, "work", 0, "worker, single, all: how long the listener takes per message, as one writing to a database would")
	fs.DurationVar(&o.progress, "progress", time.Second, "interval between progress lines")
	fs.StringVar(&o.http, "http", "", "ingress, worker: serve the group's Prometheus metrics of this process at /metrics on this address (empty: none)")
	fs.DurationVar(&o.drain, "drain", time.Minute, "all: once the feed has stopped, how long to wait for the workers to process what it sent")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	// Unset, the URLs come from the environment; set, even to "", from the flag.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["amqp"] {
		o.amqpURL = os.Getenv("FEEDKIT_AMQP_URL")
	}
	if !set["pg"] {
		o.pg = os.Getenv("FEEDKIT_PG_URL")
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: every setting is a flag (see -h)", fs.Arg(0))
	}
	if err := o.check(); err != nil {
		return o, err
	}
	return o, nil
}

// check checks the flags the role uses, naming the first that is wrong.
func (o *options) check() error {
	switch o.role {
	case roleAll, roleFeed, roleIngress, roleWorker, roleSingle:
	default:
		return fmt.Errorf("-role %q: want all, feed, ingress, worker or single", o.role)
	}
	if o.amqpURL == "" {
		return errors.New("-amqp is empty: give the RabbitMQ URL (amqp://user:pass@host:port/vhost), or set FEEDKIT_AMQP_URL")
	}
	if o.groupAMQP == "" {
		o.groupAMQP = o.amqpURL
	}
	if o.pg != "" && !strings.HasPrefix(o.pg, "postgres://") && !strings.HasPrefix(o.pg, "postgresql://") {
		return fmt.Errorf("-pg %q: want a PostgreSQL URL, postgres://user@host:port/db", o.pg)
	}
	switch {
	case o.rate <= 0:
		return fmt.Errorf("-rate %v must be positive", o.rate)
	case o.matches <= 0:
		return fmt.Errorf("-matches %d must be positive", o.matches)
	case o.outage < 0:
		return fmt.Errorf("-outage %v must not be negative", o.outage)
	case o.outage > 0 && o.outage < 2*heartbeatLimit:
		return fmt.Errorf("-outage %v must be 0 or at least %v, for the producer to be found down", o.outage, 2*heartbeatLimit)
	case o.outageAt < 0:
		return fmt.Errorf("-outage-at %v must not be negative", o.outageAt)
	case o.duration <= 0:
		return fmt.Errorf("-duration %v must be positive", o.duration)
	case o.threads < 1:
		return fmt.Errorf("-threads %d must be at least 1", o.threads)
	case o.work < 0:
		return fmt.Errorf("-work %v must not be negative", o.work)
	case o.progress <= 0:
		return fmt.Errorf("-progress %v must be positive", o.progress)
	case o.drain <= 0:
		return fmt.Errorf("-drain %v must be positive", o.drain)
	}
	switch o.role {
	case roleIngress, roleAll:
		o.k = 4
		if o.shards != "" {
			k, err := strconv.Atoi(o.shards)
			if err != nil || k < 1 || k > group.MaxShards {
				return fmt.Errorf("-shards %q: want the number of shard queues, 1 to %d", o.shards, group.MaxShards)
			}
			o.k = k
		}
		if o.role == roleAll && (o.workers < 1 || o.workers > o.k) {
			return fmt.Errorf("-workers %d must be from 1 to -shards (%d): each worker has shards of its own", o.workers, o.k)
		}
	case roleWorker:
		if o.of < 1 || o.of > group.MaxShards {
			return fmt.Errorf("-of %d: want the group's number of shard queues, 1 to %d", o.of, group.MaxShards)
		}
		o.k = o.of
		list, err := parseShards(o.shards, o.of)
		if err != nil {
			return err
		}
		o.consum = list
	}
	return nil
}

// parseShards reads a worker's -shards, "0,1": every shard when empty.
func parseShards(s string, k int) ([]int, error) {
	if s == "" {
		list := make([]int, k)
		for i := range list {
			list[i] = i
		}
		return list, nil
	}
	var list []int
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		switch {
		case err != nil:
			return nil, fmt.Errorf("-shards %q: want shard numbers separated by commas, e.g. 0,1", s)
		case n < 0 || n >= k:
			return nil, fmt.Errorf("-shards %q: shard %d is not from 0 to %d (-of %d, less one)", s, n, k-1, k)
		case slices.Contains(list, n):
			return nil, fmt.Errorf("-shards %q: shard %d is listed twice", s, n)
		}
		list = append(list, n)
	}
	return list, nil
}

// shardList writes shards as -shards takes them: "0,1".
func shardList(shards []int) string {
	s := make([]string, len(shards))
	for i, n := range shards {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	out := newPrinter(stdout)
	switch o.role {
	case roleFeed:
		return runFeed(ctx, o, out)
	case roleIngress:
		return runIngress(ctx, o, out)
	case roleWorker:
		return runWorker(ctx, o, out)
	case roleSingle:
		return runSingle(ctx, o, out)
	}
	return runAll(ctx, o, out)
}
