//go:build crash

package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/feedkit/feedkit/internal/crashtest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/workflow"
	"github.com/feedkit/feedkit/workflow/pgstore"
)

// The crash test of the workflow engine on PostgreSQL: two engine processes and a
// starter process, killed with SIGKILL at random moments and restarted, until every
// process has finished; then everything is counted.
//
// The environment that the parent gives its children.
const (
	crashURLVar       = "FEEDKIT_CRASH_WORKFLOW_PG"     // the database, with the test's schema
	crashEngineVar    = "FEEDKIT_CRASH_WORKFLOW_ENGINE" // an engine child's name
	crashProcessesVar = "FEEDKIT_CRASH_PROCESSES"       // how many processes to start (default crashProcesses)
)

const (
	crashProcesses = 2000
	crashKills     = 8
	crashCustomers = 50 // custom ids, each shared by many processes, as a customer's orders
	crashPollers   = 4  // actors per engine, each polling every actor type in turn
	// Short timeouts, so that the work of a killed engine is taken back and its broken-off
	// steps repaired within seconds: a task in progress past crashWorkTimeout is queued
	// again, a graph idle past crashIdleTimeout is checked.
	crashWorkTimeout  = 3 * time.Second
	crashIdleTimeout  = 10 * time.Second
	crashScanInterval = 200 * time.Millisecond
	// crashPollPause is an idle actor's pause when every queue was empty.
	crashPollPause = 20 * time.Millisecond
	// crashDeadline bounds the run: only a hang comes near it.
	crashDeadline = 10 * time.Minute
)

// crashNext is the graph of an order: its start task schedules check and reserve, and
// reserve schedules confirm; four tasks, four decisions, three tasks created by them.
var crashNext = map[string][]workflow.TaskSpec{
	"start":   {{ActorType: "check"}, {ActorType: "reserve"}},
	"reserve": {{ActorType: "confirm"}},
}

var crashActors = []string{"start", "check", "reserve", "confirm"}

const crashTasks = 4 // tasks per process

// The tables of the actors' side effects, beside the store's. crash_work counts how
// often each task was worked (at least once; more when a killed engine's task was
// taken back and worked again) and how often its decision was refused as decided;
// crash_released has a row per decision whose Release returned nil, and its key makes a
// second one an error in the child at once; crash_engines keeps each engine life's
// recovery counters, saved after every pass.
const crashTables = `
CREATE TABLE crash_work (
	process_id text    NOT NULL,
	task_id    text    NOT NULL,
	actor_type text    NOT NULL,
	works      integer NOT NULL,
	refused    integer NOT NULL DEFAULT 0,
	PRIMARY KEY (process_id, task_id)
);
CREATE TABLE crash_released (
	process_id text NOT NULL,
	task_id    text NOT NULL,
	engine     text NOT NULL,
	PRIMARY KEY (process_id, task_id)
);
CREATE TABLE crash_engines (
	engine             text    NOT NULL,
	start              integer NOT NULL,
	passes             bigint  NOT NULL,
	work_timeouts      bigint  NOT NULL,
	graphs_checked     bigint  NOT NULL,
	graphs_repaired    bigint  NOT NULL,
	processes_finished bigint  NOT NULL,
	repaired           bigint  NOT NULL,
	not_applied        bigint  NOT NULL,
	errors             bigint  NOT NULL,
	PRIMARY KEY (engine, start)
);`

func crashConfig(onError func(error)) workflow.Config {
	actors := make(map[string]workflow.ActorPrefs, len(crashActors))
	for _, a := range crashActors {
		actors[a] = workflow.ActorPrefs{WorkTimeout: crashWorkTimeout}
	}
	return workflow.Config{Actors: actors,
		Processes:    map[string]workflow.ProcessPrefs{"order": {IdleTimeout: crashIdleTimeout}},
		ScanInterval: crashScanInterval, OnError: onError}
}

// crashKey is the idempotency key of order i: the order's own id.
func crashKey(i int) string { return fmt.Sprintf("order-%05d", i) }

func crashRequest(i int) workflow.StartRequest {
	return workflow.StartRequest{Type: "order", CustomID: fmt.Sprintf("customer-%02d", i%crashCustomers),
		IdempotencyKey: crashKey(i), Start: workflow.TaskSpec{ActorType: "start", Args: []byte(crashKey(i))}}
}

// crashOpen connects a child to the parent's schema and opens the store (New, as any
// engine starting, on tables that exist). ok is false when the parent stopped the child
// meanwhile: it has nothing to do.
func crashOpen(ctx context.Context, t *testing.T) (pool *pgxpool.Pool, s *pgstore.Store, ok bool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(os.Getenv(crashURLVar))
	require.NoError(t, err, crashURLVar)
	cfg.MaxConns = crashPollers + 4
	pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		t.Cleanup(pool.Close)
		s, err = pgstore.New(ctx, pool, pgstore.Options{})
	}
	if err != nil && ctx.Err() != nil {
		return nil, nil, false
	}
	require.NoError(t, err)
	return pool, s, true
}

// TestCrashWorkflowTwoEngines starts FEEDKIT_CRASH_PROCESSES orders (2,000) from a
// starter process, keyed by order id, while two engine processes poll every actor type
// and run the recovery service; FEEDKIT_CRASH_KILLS times (8) it kills one of the
// three, or all at once, with SIGKILL at a random moment and restarts it (a restarted
// starter starts every order again). When every order has finished it counts, each
// count exact: the processes the search finds, by every query, are the orders started,
// each once, all finished; each holds its four tasks, each decided and applied once
// (no duplicate next task, no task missing, each graph's finished set its four tasks);
// every task was worked at least once, never more often than handed out; and starting
// every order once more starts nothing.
func TestCrashWorkflowTwoEngines(t *testing.T) {
	n := crashtest.Int(t, crashProcessesVar, crashProcesses)
	kills := crashtest.Kills(t, crashKills)
	rng := crashtest.Rand(t, "workflow")
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(t.Context(), crashDeadline)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close) // before pgtest drops the schema
	store := newStore(t, pool)
	_, err = pool.Exec(ctx, crashTables)
	require.NoError(t, err)

	env := []string{crashURLVar + "=" + url, crashProcessesVar + "=" + strconv.Itoa(n)}
	var engines []*crashtest.Process
	for _, name := range []string{"engine-1", "engine-2"} {
		engines = append(engines, crashtest.Start(t, crashtest.Spec{Name: name, Test: "TestCrashChildWorkflowEngine",
			Env: append([]string{crashEngineVar + "=" + name}, env...)}))
	}
	starter := crashtest.Start(t, crashtest.Spec{Name: "starter", Test: "TestCrashChildWorkflowStarter", Env: env, Finishes: true})
	all := append([]*crashtest.Process{starter}, engines...)

	// Each kill waits for a share of the decisions drawn at random, so that every one
	// lands under load however fast the machine is; the pause before it spaces kills
	// that come due together, so that a restarted engine works before the next.
	shares := make([]float64, kills)
	for i := range shares {
		shares[i] = 0.02 + 0.88*rng.Float64()
	}
	slices.Sort(shares)
	underLoad := 0 // kills made while some order had not finished
	chaos := crashtest.Chaos{Kills: kills, MinDelay: 100 * time.Millisecond, MaxDelay: time.Second, AllAtOnce: 0.25,
		Await: func(ctx context.Context, kill int) error {
			return crashAwaitDecided(ctx, pool, int(shares[kill]*float64(crashTasks*n)))
		},
		OnKill: func(victims []*crashtest.Process) {
			var started, finished, decided int
			err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE state = %d),
				(SELECT count(*) FROM feedkit_workflow_tasks WHERE state = %d) FROM feedkit_workflow_processes`,
				workflow.ProcessFinished, workflow.TaskFinished)).Scan(&started, &finished, &decided)
			require.NoError(t, err)
			if finished < n {
				underLoad++
			}
			names := make([]string, len(victims))
			for i, v := range victims {
				names[i] = fmt.Sprintf("%s (start %d)", v.Name(), v.Starts())
			}
			t.Logf("kill: %s; %d processes started, %d finished, %d tasks decided", strings.Join(names, ", "), started, finished, decided)
		}}
	made, err := chaos.Run(ctx, rng, all...)
	require.NoError(t, err)
	require.NoError(t, crashWaitFinished(ctx, t, pool, n, starter), "every order started and finished")
	for _, e := range engines {
		require.NoError(t, e.Stop(ctx), "%s stops cleanly", e.Name())
	}

	c := crashtest.NewCounts("workflow")
	defer c.Print() // what was counted, even when an assertion stops the test
	c.Set("kills", made)
	c.Set("kills_under_load", underLoad)
	// Each kill took one child or all of them, and each victim was restarted.
	victims := 0
	for _, p := range all {
		c.Set(p.Name()+"_kills", p.Kills())
		assert.Equal(t, p.Kills()+1, p.Starts(), "%s restarted after each kill", p.Name())
		victims += p.Kills()
	}
	c.Set("victims", victims)
	assert.Equal(t, kills, made, "every kill made")
	assert.Positive(t, underLoad, "the first kill, due at %.0f %% of the decisions, under load", 100*shares[0])
	assert.GreaterOrEqual(t, victims, made)
	assert.LessOrEqual(t, victims, made*len(all))
	crashAccount(t, store, pool, n, c)
}

// crashAwaitDecided waits until at least decided tasks are finished: the store is the
// only signal across the processes, so it is read every 100 ms.
func crashAwaitDecided(ctx context.Context, pool *pgxpool.Pool, decided int) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var got int
		if err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM feedkit_workflow_tasks WHERE state = %d`,
			workflow.TaskFinished)).Scan(&got); err != nil {
			return err
		}
		if got >= decided {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%d tasks decided, awaiting %d: %w", got, decided, ctx.Err())
		}
	}
}

// crashWaitFinished waits until the starter has finished and the store holds n
// processes, all finished: the store is the only signal across the processes, so it
// is read every 250 ms, until ctx ends or the test has failed (a child died).
func crashWaitFinished(ctx context.Context, t *testing.T, pool *pgxpool.Pool, n int, starter *crashtest.Process) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if t.Failed() {
			return errors.New("the test failed meanwhile")
		}
		var total, finished int
		err := pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE state = %d) FROM feedkit_workflow_processes`,
			workflow.ProcessFinished)).Scan(&total, &finished)
		if err != nil {
			return err
		}
		if starter.Finished() && total == n && finished == n {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d processes started, %d finished, the starter finished %v: %w",
				total, n, finished, starter.Finished(), ctx.Err())
		}
	}
}

// crashAccount checks the store and the side tables once every order has finished, and
// sets the counts in c.
func crashAccount(t *testing.T, store *pgstore.Store, pool *pgxpool.Pool, n int, c *crashtest.Counts) {
	ctx := t.Context()
	count := func(sql string) int {
		t.Helper()
		var v int64
		require.NoError(t, pool.QueryRow(ctx, sql).Scan(&v), sql)
		return int(v)
	}
	search := func(q workflow.Query) int {
		t.Helper()
		q.Limit = 1
		_, total, err := store.SearchProcesses(ctx, q)
		require.NoError(t, err)
		return total
	}

	// The search: every query's total is the orders started, each once.
	c.Set("processes", n)
	total := search(workflow.Query{Types: []string{"order"}})
	c.Set("search_total", total)
	assert.Equal(t, n, total, "search total of the type")
	finished := search(workflow.Query{States: []workflow.ProcessState{workflow.ProcessFinished}})
	c.Set("finished", finished)
	assert.Equal(t, n, finished, "search total of the finished")
	assert.Zero(t, search(workflow.Query{States: []workflow.ProcessState{workflow.ProcessRunning,
		workflow.ProcessFailed, workflow.ProcessAborted, workflow.ProcessBroken}}), "none running, failed, aborted or broken")
	assert.Equal(t, n, search(workflow.Query{Types: []string{"order"}, States: []workflow.ProcessState{workflow.ProcessFinished},
		ActorType: "confirm"}), "search total of the finished with a confirm task")
	byCustomer := 0
	for cu := range crashCustomers {
		got := search(workflow.Query{CustomID: fmt.Sprintf("customer-%02d", cu)})
		want := n / crashCustomers
		if cu < n%crashCustomers {
			want++
		}
		assert.Equal(t, want, got, "customer-%02d", cu)
		byCustomer += got
	}
	c.Set("search_by_customer", byCustomer)
	keys := map[string]bool{}
	var twice, missing []string
	for q := (workflow.Query{Types: []string{"order"}, Limit: workflow.MaxLimit}); ; {
		ps, _, err := store.SearchProcesses(ctx, q)
		require.NoError(t, err)
		if len(ps) == 0 {
			break
		}
		for _, p := range ps {
			if keys[p.IdempotencyKey] {
				twice = append(twice, p.IdempotencyKey)
			}
			keys[p.IdempotencyKey] = true
		}
		last := ps[len(ps)-1]
		q.After = &workflow.Cursor{StartedAt: last.StartedAt, ID: last.ID}
	}
	for i := range n {
		if !keys[crashKey(i)] {
			missing = append(missing, crashKey(i))
		}
	}
	c.Set("search_paged", len(keys))
	assert.Empty(t, twice[:min(len(twice), 10)], "keys found twice paging through the search (%d, the first 10)", len(twice))
	assert.Empty(t, missing[:min(len(missing), 10)], "orders not found paging through the search (%d, the first 10)", len(missing))
	assert.Len(t, keys, n)

	// The tasks: four per process, one of each actor type, each finished once, and the
	// tasks each decision scheduled exactly those the graph and the store hold.
	tasks := count(`SELECT count(*) FROM feedkit_workflow_tasks`)
	c.Set("tasks", tasks)
	assert.Equal(t, crashTasks*n, tasks)
	decisions := count(fmt.Sprintf(`SELECT count(*) FROM feedkit_workflow_tasks WHERE state = %d AND result IS NOT NULL`, workflow.TaskFinished))
	c.Set("decisions", decisions)
	assert.Equal(t, crashTasks*n, decisions, "every task decided")
	assert.Equal(t, n, count(`SELECT count(DISTINCT process_id) FROM feedkit_workflow_tasks`))
	assert.Zero(t, count(`SELECT count(*) FROM (SELECT process_id, actor_type FROM feedkit_workflow_tasks
		GROUP BY 1, 2 HAVING count(*) <> 1) x`), "one task of each actor type per process")
	assert.Zero(t, count(`SELECT count(*) FROM feedkit_workflow_tasks WHERE coalesce(cardinality(next), 0) <>
		CASE actor_type WHEN 'start' THEN 2 WHEN 'reserve' THEN 1 ELSE 0 END`), "each decision scheduled its next tasks")
	next := count(`SELECT count(*) FROM feedkit_workflow_tasks t CROSS JOIN LATERAL unnest(t.next) n(id)`)
	c.Set("next_tasks", next)
	assert.Equal(t, (crashTasks-1)*n, next)
	assert.Equal(t, (crashTasks-1)*n, count(`SELECT count(*) FROM feedkit_workflow_tasks t CROSS JOIN LATERAL unnest(t.next) n(id)
		JOIN feedkit_workflow_tasks c ON c.id = n.id AND c.process_id = t.process_id AND c.actor_type <> 'start'`),
		"every next task in the store, of its process")
	assert.Equal(t, n, count(`SELECT count(*) FROM feedkit_workflow_processes p
		JOIN feedkit_workflow_tasks t ON t.id = p.start_task AND t.process_id = p.id AND t.actor_type = 'start'`),
		"every start task in the store")

	// The graphs: nothing left, and the finished set is the process's four tasks.
	assert.Equal(t, n, count(`SELECT count(*) FROM feedkit_workflow_graphs`))
	assert.Zero(t, count(`SELECT count(*) FROM feedkit_workflow_graphs
		WHERE coalesce(cardinality(not_finished), 0) <> 0 OR coalesce(cardinality(finished), 0) <> 4`))
	applied := count(`SELECT count(DISTINCT (g.process_id, f.id)) FROM feedkit_workflow_graphs g CROSS JOIN LATERAL unnest(g.finished) f(id)
		JOIN feedkit_workflow_tasks t ON t.id = f.id AND t.process_id = g.process_id`)
	c.Set("applied", applied)
	assert.Equal(t, crashTasks*n, applied, "each decision applied to its graph once")

	// Who decided: both engines' lives, from the results.
	rows, err := pool.Query(ctx, `SELECT split_part(convert_from(result, 'UTF8'), '#', 1), count(*)
		FROM feedkit_workflow_tasks GROUP BY 1 ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var engine string
		var k int64
		require.NoError(t, rows.Scan(&engine, &k))
		c.Set("decided_by_"+engine, int(k))
	}
	require.NoError(t, rows.Err())

	// The work: at least once per task, never more than it was handed out; what more
	// than once is the work of a killed engine's life, taken back after its timeout.
	assert.Equal(t, crashTasks*n, count(`SELECT count(*) FROM crash_work`), "every task worked")
	assert.Zero(t, count(`SELECT count(*) FROM crash_work w JOIN feedkit_workflow_tasks t ON t.id = w.task_id
		WHERE w.works < 1 OR w.works > t.attempts OR t.process_id <> w.process_id`), "worked once to as often as handed out")
	c.Set("worked", count(`SELECT coalesce(sum(works), 0) FROM crash_work`))
	c.Set("worked_again", count(`SELECT count(*) FROM crash_work WHERE works > 1`))
	c.Set("refused_decided", count(`SELECT coalesce(sum(refused), 0) FROM crash_work`))
	released := count(`SELECT count(*) FROM crash_released`)
	c.Set("released", released)
	assert.LessOrEqual(t, released, crashTasks*n, "each Release that returned nil has its row, once")
	assert.Zero(t, count(`SELECT count(*) FROM feedkit_workflow_tasks WHERE attempts < 1`), "every task handed out")
	takenBack := count(`SELECT coalesce(sum(attempts), 0) FROM feedkit_workflow_tasks`) - crashTasks*n
	c.Set("taken_back", takenBack)

	// The engines' recovery counters, as saved after each pass (a kill loses the last).
	var passes, workTimeouts, checked, graphsRepaired, scanFinished, repaired, notApplied, errs int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(passes), 0), coalesce(sum(work_timeouts), 0),
		coalesce(sum(graphs_checked), 0), coalesce(sum(graphs_repaired), 0), coalesce(sum(processes_finished), 0),
		coalesce(sum(repaired), 0), coalesce(sum(not_applied), 0), coalesce(sum(errors), 0) FROM crash_engines`).
		Scan(&passes, &workTimeouts, &checked, &graphsRepaired, &scanFinished, &repaired, &notApplied, &errs))
	assert.LessOrEqual(t, int(workTimeouts), takenBack, "a task taken back by a work timeout was handed out again")
	c.Set("recovery_passes", int(passes))
	c.Set("work_timeouts", int(workTimeouts))
	c.Set("graphs_checked", int(checked))
	c.Set("graphs_repaired", int(graphsRepaired))
	c.Set("scan_finished", int(scanFinished))
	c.Set("repaired", int(repaired))
	c.Set("not_applied", int(notApplied))
	c.Set("errors_reported", int(errs))

	// A starter that starts every order once more, as one restarted after the end
	// would, gets every process back and creates none.
	e, err := workflow.New(store, crashConfig(func(err error) { t.Error(err) }))
	require.NoError(t, err)
	created, notFinished := 0, 0
	for i := range n {
		p, ok, err := e.Start(ctx, crashRequest(i))
		require.NoError(t, err)
		if ok {
			created++
		}
		if p.State != workflow.ProcessFinished {
			notFinished++
		}
	}
	assert.Zero(t, notFinished, "processes got back not finished")
	c.Set("started_again_created", created)
	assert.Zero(t, created, "starting every order again creates none")
}

// TestCrashChildWorkflowStarter is the starter child: it starts every order, keyed by
// its id, in order, from the first whatever it did in an earlier life (it remembers
// nothing), and returns when all are started.
func TestCrashChildWorkflowStarter(t *testing.T) {
	ctx := crashtest.Child(t)
	n, err := strconv.Atoi(os.Getenv(crashProcessesVar))
	require.NoError(t, err, crashProcessesVar)
	_, store, ok := crashOpen(ctx, t)
	if !ok {
		return
	}
	e, err := workflow.New(store, crashConfig(func(err error) { fmt.Fprintln(os.Stderr, "starter:", err) }))
	require.NoError(t, err)
	crashtest.Ready()
	for i := range n {
		if _, _, err := e.Start(ctx, crashRequest(i)); err != nil {
			if ctx.Err() != nil {
				return // stopped
			}
			t.Fatalf("start %s: %v", crashKey(i), err)
		}
	}
}

// TestCrashChildWorkflowEngine is an engine child: crashPollers actors poll every actor
// type in turn, record their work and release their decision, while the recovery
// service runs; until the parent stops it.
func TestCrashChildWorkflowEngine(t *testing.T) {
	ctx := crashtest.Child(t)
	name := os.Getenv(crashEngineVar)
	start := crashtest.StartNumber()
	pool, store, ok := crashOpen(ctx, t)
	if !ok {
		return
	}
	var errs, notApplied atomic.Int64
	e, err := workflow.New(store, crashConfig(func(err error) {
		if errs.Add(1) <= 10 {
			fmt.Fprintln(os.Stderr, "engine error:", err)
		}
	}))
	require.NoError(t, err)
	crashtest.Ready()

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return crashRecover(gctx, e, pool, name, start, &errs, &notApplied) })
	for i := range crashPollers {
		g.Go(func() error { return crashActor(gctx, e, pool, name, start, i, &notApplied) })
	}
	err = g.Wait()
	if ctx.Err() == nil { // not stopped: an actor or the recovery failed
		t.Fatal(err)
	}
}

// crashRecover runs the recovery service, as Engine.Run does, and saves the engine's
// counters after every pass.
func crashRecover(ctx context.Context, e *workflow.Engine, pool *pgxpool.Pool, name string, start int,
	errs, notApplied *atomic.Int64) error {
	tick := time.NewTicker(crashScanInterval)
	defer tick.Stop()
	var passes, repaired int64
	for {
		r, err := e.RecoverDue(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("recover: %w", err)
		}
		passes++
		repaired += int64(r.Repaired)
		c := e.Counters()
		if _, err := pool.Exec(ctx, `INSERT INTO crash_engines VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (engine, start) DO UPDATE SET passes = $3, work_timeouts = $4, graphs_checked = $5,
			graphs_repaired = $6, processes_finished = $7, repaired = $8, not_applied = $9, errors = $10`,
			name, start, passes, c.WorkTimeouts, c.GraphsChecked, c.GraphsRepaired, c.ProcessesFinished,
			repaired, notApplied.Load(), errs.Load()); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("save the counters: %w", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// crashActor polls every actor type in turn, from its own offset; for each task it
// records its work, then releases the decision that crashNext says.
func crashActor(ctx context.Context, e *workflow.Engine, pool *pgxpool.Pool, name string, start, i int, notApplied *atomic.Int64) error {
	for ctx.Err() == nil {
		got := false
		for k := range crashActors {
			actorType := crashActors[(i+k)%len(crashActors)]
			tk, ok, err := e.Poll(ctx, actorType)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("poll %s: %w", actorType, err)
			}
			if !ok {
				continue
			}
			got = true
			if err := crashWork(ctx, e, pool, name, start, tk, notApplied); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		if !got {
			if err := crashtest.Pause(ctx, crashPollPause); err != nil {
				return nil
			}
		}
	}
	return nil
}

// crashWork does task tk: its side effect, counted per task, then its decision. A
// decision refused as decided (the task was taken back from this engine, or another
// life of it, and decided by another actor) is counted; one accepted whose rest was
// left to recovery too.
func crashWork(ctx context.Context, e *workflow.Engine, pool *pgxpool.Pool, name string, start int, tk workflow.Task, notApplied *atomic.Int64) error {
	if _, err := pool.Exec(ctx, `INSERT INTO crash_work (process_id, task_id, actor_type, works) VALUES ($1, $2, $3, 1)
		ON CONFLICT (process_id, task_id) DO UPDATE SET works = crash_work.works + 1`,
		tk.ProcessID, tk.ID, tk.Spec.ActorType); err != nil {
		return fmt.Errorf("work on %s: %w", tk.ID, err)
	}
	err := e.Release(ctx, workflow.Decision{TaskID: tk.ID, Pass: tk.Pass, Next: crashNext[tk.Spec.ActorType],
		Result: fmt.Appendf(nil, "%s#%d", name, start)})
	switch {
	case err == nil:
		// A second nil Release of one task would break the key: an error, at once.
		if _, err := pool.Exec(ctx, `INSERT INTO crash_released VALUES ($1, $2, $3)`, tk.ProcessID, tk.ID, name); err != nil {
			return fmt.Errorf("task %s released: %w", tk.ID, err)
		}
	case errors.Is(err, workflow.ErrDecided):
		if _, err := pool.Exec(ctx, `UPDATE crash_work SET refused = refused + 1 WHERE process_id = $1 AND task_id = $2`,
			tk.ProcessID, tk.ID); err != nil {
			return fmt.Errorf("task %s refused: %w", tk.ID, err)
		}
	case errors.Is(err, workflow.ErrNotApplied):
		notApplied.Add(1)
	default:
		return fmt.Errorf("release %s: %w", tk.ID, err)
	}
	return nil
}
