package workflowtest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/workflow"
)

// The racers of testIdempotentStart's race: goroutines spread over engines sharing one
// store, all starting the process of one key.
const (
	startEngines = 3
	startRacers  = 24
)

// startRig is engines on one store, for the idempotent starts.
type startRig struct {
	t     *testing.T
	store workflow.Store
	clk   *clocktest.Fake
	mu    sync.Mutex
	errs  []error // what the engines reported
}

func newStartRig(t *testing.T, newStore func(*testing.T) workflow.Store) *startRig {
	return &startRig{t: t, store: newStore(t), clk: clocktest.NewFake(t0)}
}

// engine returns a new engine on s (the rig's store, or a wrapper of it), as a starter
// that restarts gets.
func (r *startRig) engine(s workflow.Store) *workflow.Engine {
	r.t.Helper()
	e, err := workflow.New(s, workflow.Config{Clock: r.clk, OnError: func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.errs = append(r.errs, err)
	}})
	require.NoError(r.t, err)
	return e
}

// start starts req on e and requires it to succeed.
func (r *startRig) start(e *workflow.Engine, req workflow.StartRequest) (workflow.Process, bool) {
	r.t.Helper()
	p, created, err := e.Start(r.t.Context(), req)
	require.NoError(r.t, err)
	return p, created
}

// processes is how many processes the store holds.
func (r *startRig) processes() int {
	r.t.Helper()
	_, total, err := r.store.SearchProcesses(r.t.Context(), workflow.Query{})
	require.NoError(r.t, err)
	return total
}

// tasks is how many tasks process id has, of any run.
func (r *startRig) tasks(id string) int {
	r.t.Helper()
	ts, err := r.store.ProcessTasks(r.t.Context(), id)
	require.NoError(r.t, err)
	return len(ts)
}

// order is the request of order n, with key key.
func order(n int, key string) workflow.StartRequest {
	return workflow.StartRequest{Type: "order", CustomID: fmt.Sprint("order-", n), IdempotencyKey: key,
		Start: workflow.TaskSpec{ActorType: "check", Args: []byte(fmt.Sprintf(`{"order":%d}`, n))}}
}

// testIdempotentStart checks Engine.Start with an idempotency key, on the store: a
// second start of a key gets the process of the first (from the same engine, another,
// or a new one after a restart), whatever the process's state; other arguments with the
// key are refused; racing starts of one key make one process; a start broken off after
// the process was saved is completed by the next start of its key.
func testIdempotentStart(t *testing.T, newStore func(*testing.T) workflow.Store) {
	t.Run("SameKeyTwice", func(t *testing.T) {
		r := newStartRig(t, newStore)
		e := r.engine(r.store)
		first, created := r.start(e, order(1, "order-1"))
		assert.True(t, created)
		assert.Equal(t, "order-1", first.IdempotencyKey)
		again, created := r.start(e, order(1, "order-1"))
		assert.False(t, created, "the key's process exists")
		assert.Equal(t, first.ID, again.ID)
		assert.Equal(t, first.StartTask, again.StartTask)
		assert.Equal(t, 1, r.processes())
		assert.Equal(t, 1, r.tasks(first.ID), "one start task")
		assert.Empty(t, r.errs)
	})

	t.Run("KeyPerType", func(t *testing.T) {
		r := newStartRig(t, newStore)
		e := r.engine(r.store)
		o, created := r.start(e, order(1, "k"))
		require.True(t, created)
		refund := order(1, "k")
		refund.Type = "refund"
		p, created := r.start(e, refund)
		assert.True(t, created, "a key is unique within its process type only")
		assert.NotEqual(t, o.ID, p.ID)
		assert.Equal(t, 2, r.processes())
	})

	t.Run("EmptyKeyIsNoKey", func(t *testing.T) {
		r := newStartRig(t, newStore)
		e := r.engine(r.store)
		a, created := r.start(e, order(1, ""))
		require.True(t, created)
		b, created := r.start(e, order(1, ""))
		assert.True(t, created, "no key, no idempotency: every start is a process")
		assert.NotEqual(t, a.ID, b.ID)
		assert.Equal(t, 2, r.processes())
	})

	t.Run("OtherArgumentsRefused", func(t *testing.T) {
		r := newStartRig(t, newStore)
		e := r.engine(r.store)
		p, _ := r.start(e, order(1, "k"))
		otherArgs, otherCustomID, otherActor := order(2, "k"), order(1, "k"), order(1, "k")
		otherArgs.CustomID = "order-1" // only Args differ
		otherCustomID.CustomID = "order-2"
		otherActor.Start.ActorType = "verify"
		for name, req := range map[string]workflow.StartRequest{"Start.Args": otherArgs,
			"CustomID": otherCustomID, "Start.ActorType": otherActor} {
			got, created, err := e.Start(t.Context(), req)
			require.ErrorIs(t, err, workflow.ErrKeyReused, name)
			assert.ErrorContains(t, err, `StartRequest.IdempotencyKey "k"`, name)
			assert.ErrorContains(t, err, p.ID, "%s: the error names the process that holds the key", name)
			assert.False(t, created, name)
			assert.Equal(t, p.ID, got.ID, "%s: the process that holds the key comes with the error", name)
		}
		assert.Equal(t, 1, r.processes(), "nothing created")
		again, created := r.start(e, order(1, "k"))
		assert.False(t, created)
		assert.Equal(t, p.ID, again.ID, "the same arguments get the process")
	})

	t.Run("RestartedStarter", func(t *testing.T) {
		r := newStartRig(t, newStore)
		p, _ := r.start(r.engine(r.store), order(1, "order-1"))
		again, created := r.start(r.engine(r.store), order(1, "order-1"))
		assert.False(t, created, "a new engine finds the key in the store")
		assert.Equal(t, p.ID, again.ID)
		assert.Equal(t, 1, r.processes())
	})

	t.Run("KeyOutlivesTheProcess", func(t *testing.T) {
		r := newStartRig(t, newStore)
		e := r.engine(r.store)
		ctx := t.Context()
		done, _ := r.start(e, order(1, "done"))
		task, ok, err := e.Poll(ctx, "check")
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, e.Release(ctx, workflow.Decision{TaskID: task.ID, Pass: task.Pass}))
		again, created := r.start(e, order(1, "done"))
		assert.False(t, created, "a finished process keeps its key")
		assert.Equal(t, done.ID, again.ID)
		assert.Equal(t, workflow.ProcessFinished, again.State)

		aborted, _ := r.start(e, order(2, "aborted"))
		require.NoError(t, e.Abort(ctx, aborted.ID, "by the operator"))
		again, created = r.start(e, order(2, "aborted"))
		assert.False(t, created, "an aborted process keeps its key")
		assert.Equal(t, aborted.ID, again.ID)
		assert.Equal(t, workflow.ProcessAborted, again.State)

		_, ok, err = e.Poll(ctx, "check")
		require.NoError(t, err)
		assert.False(t, ok, "no start task queued again")
		assert.Equal(t, 2, r.processes())
	})

	t.Run("KeyOutlivesARestart", func(t *testing.T) {
		r := newStartRig(t, newStore)
		e := r.engine(r.store)
		ctx := t.Context()
		p, _ := r.start(e, order(1, "k"))
		task, ok, err := e.Poll(ctx, "check")
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, e.Release(ctx, workflow.Decision{TaskID: task.ID, Pass: task.Pass,
			Next: []workflow.TaskSpec{{ActorType: "pay", Args: []byte("42")}}}))
		pay, ok, err := e.Poll(ctx, "pay")
		require.NoError(t, err)
		require.True(t, ok)
		// The operator runs it again from its "pay" task: the process's Start is that
		// task's now, and the starter's retry still matches the key's first request.
		restarted, err := e.Restart(ctx, p.ID, pay.ID, "the bank was down")
		require.NoError(t, err)
		require.Equal(t, "pay", restarted.Start.ActorType)
		again, created := r.start(e, order(1, "k"))
		assert.False(t, created)
		assert.Equal(t, p.ID, again.ID)
		assert.Equal(t, 1, again.Run, "the process as the restart left it")
		_, _, err = e.Start(ctx, order(2, "k"))
		assert.ErrorIs(t, err, workflow.ErrKeyReused, "other arguments are still refused")
		assert.Equal(t, 1, r.processes())
	})

	t.Run("Race", func(t *testing.T) {
		r := newStartRig(t, newStore)
		engines := make([]*workflow.Engine, startEngines)
		for i := range engines {
			engines[i] = r.engine(r.store)
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
			got     = make(map[string]int) // process id → starts that returned it
		)
		start := make(chan struct{})
		for i := range startRacers {
			wg.Go(func() {
				<-start
				p, ok, err := engines[i%startEngines].Start(t.Context(), order(1, "order-1"))
				if err != nil {
					t.Errorf("racer %d: %v", i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				got[p.ID]++
				if ok {
					created++
				}
			})
		}
		close(start)
		wg.Wait()
		assert.Equal(t, 1, created, "one start creates the process")
		require.Len(t, got, 1, "every start gets the same process")
		for id, n := range got {
			assert.Equal(t, startRacers, n)
			assert.Equal(t, 1, r.tasks(id), "one start task")
			g := graphOf(t, r.store, id)
			assert.Len(t, g.NotFinished, 1, "the graph lists the start task once")
		}
		assert.Equal(t, 1, r.processes())
		task, ok, err := engines[0].Poll(t.Context(), "check")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, []byte(`{"order":1}`), task.Spec.Args)
		_, ok, err = engines[1].Poll(t.Context(), "check")
		require.NoError(t, err)
		assert.False(t, ok, "one task to hand out")
	})

	t.Run("StartBrokenOff", func(t *testing.T) {
		// The starter saves the process and dies before its graph and start task: the
		// same key started again (by the starter restarted) gets that process, begun.
		r := newStartRig(t, newStore)
		dead := dieAfter(r.store, 1)
		p, created, err := r.engine(dead).Start(t.Context(), order(1, "order-1"))
		require.NoError(t, err, "the process is saved; the rest is left to recovery")
		require.True(t, created)
		require.True(t, dead.isDead())
		_, err = r.store.Graph(t.Context(), p.ID)
		require.ErrorIs(t, err, workflow.ErrNotFound, "the start broke off before the graph")

		again, created := r.start(r.engine(r.store), order(1, "order-1"))
		assert.False(t, created, "the saved process holds the key")
		assert.Equal(t, p.ID, again.ID)
		assert.Equal(t, 1, r.processes())
		g := graphOf(t, r.store, p.ID)
		assert.Equal(t, []string{p.StartTask}, g.NotFinished, "the second start began the process")
		assert.Equal(t, workflow.TaskQueued, getTask(t, r.store, p.StartTask).State)
		assert.Equal(t, 1, r.tasks(p.ID))

		// Nothing is left for the recovery service: it finds the process begun.
		r.clk.Advance(workflow.DefaultIdleTimeout)
		rep, err := r.engine(r.store).RecoverDue(t.Context())
		require.NoError(t, err)
		assert.Zero(t, rep.Repaired)
		assert.Equal(t, 1, r.tasks(p.ID))
	})
}
