// Command workflow runs order processes through the workflow engine with actors that
// sometimes hang, crash or answer late, and shows the engine repairing it all: the
// recovery counters while it runs, then an operator's mass recovery job over every
// process, with its progress.
//
//	go run ./examples/workflow                        # in memory, 200 processes
//	go run ./examples/workflow -processes 1000 -hang 0.1
//	go run ./examples/workflow -pg postgres://user@127.0.0.1:5432/db
//	go run ./examples/workflow -http 127.0.0.1:9100  # its metrics at /metrics while it runs
//
// Each order is a "validate" task that schedules "charge" and "ship", started with the
// order's id as its idempotency key; once the actors are at work the program starts
// every order again, as a starter that restarted would, and each start gets the order's
// process instead of a second one. Every actor type has a work timeout of
// -work-timeout; an actor hangs (never answers) with probability -hang, fails with
// -crash (retried, up to 8 handings-out in all; an actor never fails a task's last one,
// so that no order fails for good by the luck of the draw), and answers after its
// timeout with -late (its task was already handed to another actor; "validate" accepts
// only the current pass, so the late answer is refused; the others accept the first
// answer). It ends with what the engine repaired and a verdict, "OK: ..." or
// "FAILED: ...": it exits 0 when every process finished, 1 otherwise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedkit/feedkit/promfeedkit"
	"github.com/feedkit/feedkit/workflow"
	"github.com/feedkit/feedkit/workflow/pgstore"
)

func main() {
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// command runs the program with the command line's arguments and returns its exit
// status: 0 after -h, which prints the usage, and 1 for a bad flag or a failed run.
func command(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, args, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		if !errors.As(err, new(reported)) { // a verdict says it already
			fmt.Fprintln(stderr, "workflow:", err)
		}
		return 1
	}
	return 0
}

type options struct {
	processes   int
	actors      int
	workTimeout time.Duration
	hang, crash float64
	late        float64
	timeout     time.Duration
	pgURL       string
	seed        uint64
	http        string // -http: serve /metrics here while running

	// atEnd, when not nil, is called once the orders have run and the mass recovery
	// job is done, while /metrics is still served: a test reads the metrics then.
	atEnd func(metricsAddr string, e *workflow.Engine)
}

// usage is what -h prints before the flags: what the program does, then how to call it.
const usage = `Workflow runs orders (validate, then charge and ship) through the workflow engine with
actors that sometimes hang, fail or answer late, shows the engine's recovery putting
every order through anyway, and exits 0 once every order has finished.

Usage: workflow [flags]

Flags:
`

// parseFlags reads the command line; -h, and a bad flag, print the usage to out.
func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("workflow", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.IntVar(&o.processes, "processes", 200, "how many orders to run (one order process each)")
	fs.IntVar(&o.actors, "actors", 4, "actors per actor type")
	fs.DurationVar(&o.workTimeout, "work-timeout", 300*time.Millisecond, "how long an actor has for a task")
	fs.Float64Var(&o.hang, "hang", 0.05, "probability that an actor never answers")
	fs.Float64Var(&o.crash, "crash", 0.05, "probability that an actor's work fails")
	fs.Float64Var(&o.late, "late", 0.05, "probability that an actor answers after its work timeout")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "give up after this long")
	fs.StringVar(&o.pgURL, "pg", "", "PostgreSQL `URL` for the store (default: in memory)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the actors' misbehaviour")
	fs.StringVar(&o.http, "http", "", "serve the engine's metrics for Prometheus at http://`ADDR`/metrics while running (e.g. 127.0.0.1:9100); empty: none")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.processes <= 0:
		return o, fmt.Errorf("-processes %d must be positive", o.processes)
	case o.actors <= 0:
		return o, fmt.Errorf("-actors %d must be positive", o.actors)
	case o.workTimeout <= 0:
		return o, fmt.Errorf("-work-timeout %v must be positive", o.workTimeout)
	case o.timeout <= 0:
		return o, fmt.Errorf("-timeout %v must be positive", o.timeout)
	}
	for name, p := range map[string]float64{"-hang": o.hang, "-crash": o.crash, "-late": o.late} {
		if p < 0 || p > 0.5 {
			return o, fmt.Errorf("%s %v must be within [0, 0.5]", name, p)
		}
	}
	return o, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	return runOrders(ctx, o, out)
}

// runOrders runs the orders as o says and prints what happens, then the verdict.
func runOrders(ctx context.Context, o options, out io.Writer) error {
	store, where, closeStore, err := openStore(ctx, o.pgURL)
	if err != nil {
		return err
	}
	defer closeStore()
	reg := prometheus.NewRegistry()
	metrics, err := promfeedkit.NewWorkflow(reg)
	if err != nil {
		return err
	}
	strict := false
	retry := workflow.RetryPolicy{MaxAttempts: maxAttempts, Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	engine, err := workflow.New(store, workflow.Config{
		Actors: map[string]workflow.ActorPrefs{
			"validate": {WorkTimeout: o.workTimeout, AcceptFirst: &strict, Retry: retry},
			"charge":   {WorkTimeout: o.workTimeout, Retry: retry},
			"ship":     {WorkTimeout: o.workTimeout, Retry: retry},
		},
		Processes:    map[string]workflow.ProcessPrefs{"order": {IdleTimeout: 2 * o.workTimeout}},
		ScanInterval: 50 * time.Millisecond,
		Observer:     metrics,
	})
	if err != nil {
		return err
	}
	if err := metrics.WatchEngine(engine); err != nil {
		return err
	}
	metricsAddr := ""
	if o.http != "" {
		addr, stop, err := serveMetrics(o.http, reg)
		if err != nil {
			return fmt.Errorf("-http: %w", err)
		}
		defer stop()
		metricsAddr = addr
		fmt.Fprintf(out, "Metrics for Prometheus: http://%s/metrics\n", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	start := time.Now()
	fmt.Fprintf(out, "Running %d orders on %s with %d actors per actor type (validate, charge, ship). An actor has %v for a task; "+
		"it never answers %.0f%% of the time, fails %.0f%% and answers late %.0f%%.\n",
		o.processes, where, o.actors, o.workTimeout, 100*o.hang, 100*o.crash, 100*o.late)

	for i := range o.processes {
		if _, _, err := engine.Start(ctx, orderRequest(i)); err != nil {
			return err
		}
	}

	var wg sync.WaitGroup
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	wg.Go(func() { _ = engine.Run(workCtx) }) // the recovery service
	var st stats
	for ti, actorType := range []string{"validate", "charge", "ship"} {
		for a := range o.actors {
			rng := rand.New(rand.NewPCG(o.seed, uint64(ti*1000+a)))
			wg.Go(func() { actor(workCtx, engine, actorType, o, rng, &st) })
		}
	}
	// The starter restarts and starts every order again, not knowing which it started:
	// each start gets the order's process by its key, whatever the actors made of it.
	existing := 0
	for i := range o.processes {
		_, created, err := engine.Start(ctx, orderRequest(i))
		if err != nil {
			return err
		}
		if !created {
			existing++
		}
	}

	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var finished int
	for {
		finished, err = countFinished(ctx, engine)
		if err != nil {
			return err
		}
		c := engine.Counters()
		fmt.Fprintf(out, "  %5.2fs: %4d/%d orders finished; %3d work timeouts (validate %d, charge %d, ship %d); late answers %d refused, %d accepted; %d failures\n",
			time.Since(start).Seconds(), finished, o.processes, c.WorkTimeouts, c.WorkTimeoutsByActor["validate"],
			c.WorkTimeoutsByActor["charge"], c.WorkTimeoutsByActor["ship"], st.lateRefused.Load(), st.lateAccepted.Load(), st.crashed.Load())
		if finished == o.processes {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopWork()
	wg.Wait()

	// An operator's mass recovery over every order: all are consistent by now, so it
	// repairs nothing; its progress is saved as it goes.
	job, err := engine.StartJob(context.Background(), workflow.Query{Types: []string{"order"}}, nil, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "An operator's mass recovery job, %s, checks every order:\n", job.ID[:8])
	var shown jobProgress
	for job.State != workflow.JobDone {
		if job, err = engine.StepJob(context.Background(), job.ID); err != nil {
			return err
		}
		if now := progressOf(job); now != shown { // the step that ends the job may have checked nothing
			shown = now
			fmt.Fprintf(out, "  %d/%d orders checked, %d repaired, %d errors\n", job.Done, job.Total, job.Repaired, job.Errors)
		}
	}

	if o.atEnd != nil {
		o.atEnd(metricsAddr, engine)
	}
	c := engine.Counters()
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Every order was started a second time, as a starter that restarted would: %d of those starts got the order's process, %d created another.\n",
		existing, o.processes-existing)
	fmt.Fprintf(out, "%d tasks were decided (validate, charge and ship of each finished order).\n", st.decided.Load())
	fmt.Fprintf(out, "%d times an actor took a task and never answered; %d times it answered after its work timeout.\n",
		st.hung.Load(), st.lateRefused.Load()+st.lateAccepted.Load())
	fmt.Fprintf(out, "The recovery service took %d tasks back after their work timeout and handed them out again.\n", c.WorkTimeouts)
	fmt.Fprintf(out, "Of the late answers, %d were refused (validate takes only the answer to its latest handing-out, and no task takes a second decision) "+
		"and %d accepted (charge and ship take the first answer, late or not).\n", st.lateRefused.Load(), st.lateAccepted.Load())
	fmt.Fprintf(out, "%d times an actor's work failed; the engine retried each.\n", st.crashed.Load())
	fmt.Fprintf(out, "The recovery service checked idle orders %d times and repaired %d.\n", c.GraphsChecked, c.GraphsRepaired)
	elapsed := time.Since(start).Round(10 * time.Millisecond)
	if finished != o.processes {
		others, _, _ := engine.Search(context.Background(), workflow.Query{Types: []string{"order"},
			States: []workflow.ProcessState{workflow.ProcessRunning, workflow.ProcessFailed, workflow.ProcessBroken}, Limit: 10})
		for _, p := range others {
			fmt.Fprintf(out, "  not finished: %s %s %s %s\n", p.ID, p.CustomID, p.State, p.Reason)
			if tasks, err := store.ProcessTasks(context.Background(), p.ID); err == nil {
				for _, t := range tasks {
					fmt.Fprintf(out, "    task %s %s %s attempts %d run %d error %q\n", t.ID[:8], t.Spec.ActorType, t.State, t.Attempts, t.Run, t.Error)
				}
			}
			if g, err := store.Graph(context.Background(), p.ID); err == nil {
				fmt.Fprintf(out, "    graph not finished %v finished %v recovery %v\n", g.NotFinished, g.Finished, g.RecoveryTime)
			}
		}
	}
	return verdict(out, finished, o.processes, elapsed)
}

// verdict prints the run's last line, "OK: ..." when all the orders finished, "FAILED:
// ..." otherwise, and returns the failure, as told already.
func verdict(out io.Writer, finished, orders int, elapsed time.Duration) error {
	if finished == orders {
		fmt.Fprintf(out, "OK: all %d orders finished in %v\n", orders, elapsed)
		return nil
	}
	err := fmt.Errorf("%d of %d orders did not finish in %v", orders-finished, orders, elapsed)
	fmt.Fprintf(out, "FAILED: %v\n", err)
	return reported{err}
}

// jobProgress is what the mass recovery job's progress line shows.
type jobProgress struct{ done, total, repaired, errors int }

func progressOf(j workflow.Job) jobProgress {
	return jobProgress{j.Done, j.Total, j.Repaired, j.Errors}
}

// reported is a run's failure that its verdict has printed already.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// orderRequest is the start of order i, keyed by the order's id: starting it again
// gets its process.
func orderRequest(i int) workflow.StartRequest {
	id := fmt.Sprintf("order-%04d", i)
	return workflow.StartRequest{Type: "order", CustomID: id, IdempotencyKey: id,
		Start: workflow.TaskSpec{ActorType: "validate", Args: []byte(fmt.Sprint(i))}}
}

// maxAttempts is how many times a task is handed out before a failed decision fails it
// for good.
const maxAttempts = 8

// stats counts what the actors did.
type stats struct {
	decided, hung, crashed, lateRefused, lateAccepted atomic.Int64
}

// actor polls its type's queue and decides, misbehaving as the options say.
func actor(ctx context.Context, e *workflow.Engine, actorType string, o options, rng *rand.Rand, st *stats) {
	for ctx.Err() == nil {
		t, ok, err := e.Poll(ctx, actorType)
		if err != nil || !ok {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
			}
			continue
		}
		d := workflow.Decision{TaskID: t.ID, Pass: t.Pass}
		if actorType == "validate" {
			d.Next = []workflow.TaskSpec{{ActorType: "charge"}, {ActorType: "ship"}}
		}
		switch r := rng.Float64(); {
		case r < o.hang:
			st.hung.Add(1)
			continue // never answers: the recovery service takes the task back
		case r < o.hang+o.late:
			select { // answers after its timeout: the task has gone to another actor
			case <-time.After(o.workTimeout + o.workTimeout/2):
			case <-ctx.Done():
				return
			}
			err := e.Release(ctx, d)
			switch {
			case accepted(err):
				st.lateAccepted.Add(1)
				st.decided.Add(1)
			case errors.Is(err, workflow.ErrStalePass), errors.Is(err, workflow.ErrDecided):
				st.lateRefused.Add(1)
			}
			continue
		case r < o.hang+o.late+o.crash && t.Attempts < maxAttempts:
			// Not on the last handing-out, which would fail the order for good: whether
			// that happens would depend on which actor drew which task.
			st.crashed.Add(1)
			d.Next, d.Error = nil, "the bank did not answer"
		}
		if err := e.Release(ctx, d); accepted(err) && d.Error == "" {
			st.decided.Add(1)
		}
	}
}

// accepted reports whether Release accepted the decision: its error is nil, or says the
// rest was left to the recovery service (the store failing, or the run ending, after
// the decision was recorded).
func accepted(err error) bool { return err == nil || errors.Is(err, workflow.ErrNotApplied) }

func countFinished(ctx context.Context, e *workflow.Engine) (int, error) {
	_, n, err := e.Search(ctx, workflow.Query{Types: []string{"order"}, States: []workflow.ProcessState{workflow.ProcessFinished}, Limit: 1})
	return n, err
}

// openStore returns the in-memory store, or a PostgreSQL one with -pg.
func openStore(ctx context.Context, url string) (workflow.Store, string, func(), error) {
	if url == "" {
		return workflow.NewMemoryStore(), "the in-memory store", func() {}, nil
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, "", nil, err
	}
	s, err := pgstore.New(ctx, pool, pgstore.Options{})
	if err != nil {
		pool.Close()
		return nil, "", nil, err
	}
	return s, "PostgreSQL", pool.Close, nil
}
