package workflowtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/workflow"
)

// siblingEngines is how many engines release the siblings.
const siblingEngines = 3

// testSiblingReleases has the start task of one process schedule n sibling tasks, hands
// them out, and releases them all at once from several engines sharing the store:
// every Release returns nil, and when they have all returned every decision is in the
// graph, once, and the process is finished, with no error reported.
//
// In lockstep, the siblings read the graph in rounds (lockstep): each round opens when
// every release not yet returned waits to read it, so all of them read the same version
// and one write wins; the last sibling loses n-1 rounds. That is the worst interleaving
// the scheduler could produce, made every time.
func testSiblingReleases(t *testing.T, newStore func(*testing.T) workflow.Store, n int, inLockstep bool) {
	base := newStore(t)
	ctx := t.Context()
	clk := clocktest.NewFake(t0)
	var (
		errMu sync.Mutex
		errs  []error
	)
	onError := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		errs = append(errs, err)
	}
	var s workflow.Store = base
	var ls *lockstep
	if inLockstep {
		ls = &lockstep{Store: base, parties: n}
		ls.cond = sync.NewCond(&ls.mu)
		s = ls
	}
	engines := make([]*workflow.Engine, siblingEngines)
	for i := range engines {
		e, err := workflow.New(s, workflow.Config{Clock: clk, OnError: onError})
		require.NoError(t, err)
		engines[i] = e
	}
	p, _, err := engines[0].Start(ctx, workflow.StartRequest{Type: "order", Start: workflow.TaskSpec{ActorType: "split"}})
	require.NoError(t, err)
	first, ok, err := engines[0].Poll(ctx, "split")
	require.NoError(t, err)
	require.True(t, ok)
	next := make([]workflow.TaskSpec, n)
	for i := range next {
		next[i] = workflow.TaskSpec{ActorType: "leaf", Args: fmt.Appendf(nil, "%d", i)}
	}
	require.NoError(t, engines[0].Release(ctx, workflow.Decision{TaskID: first.ID, Pass: first.Pass, Next: next}))
	leaves := make([]workflow.Task, n)
	for i := range leaves {
		tk, ok, err := engines[i%siblingEngines].Poll(ctx, "leaf")
		require.NoError(t, err)
		require.True(t, ok, "sibling %d handed out", i)
		leaves[i] = tk
	}
	_, ok, err = engines[0].Poll(ctx, "leaf")
	require.NoError(t, err)
	require.False(t, ok, "exactly %d siblings", n)

	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make([]error, n)
	if ls != nil {
		ls.watch(p.ID)
	}
	for i, tk := range leaves {
		wg.Go(func() {
			<-start
			results[i] = engines[i%siblingEngines].Release(ctx, workflow.Decision{TaskID: tk.ID, Pass: tk.Pass, Result: []byte("ok")})
			if ls != nil {
				ls.leave()
			}
		})
	}
	close(start)
	wg.Wait()

	for i, err := range results {
		require.NoError(t, err, "release of sibling %d", i)
	}
	g, err := base.Graph(ctx, p.ID)
	require.NoError(t, err)
	assert.Zero(t, len(g.NotFinished), "every decision in the graph when Release returned")
	want := []string{first.ID}
	for _, tk := range leaves {
		want = append(want, tk.ID)
	}
	slices.Sort(want)
	got := slices.Clone(g.Finished)
	slices.Sort(got)
	assert.Equal(t, want, got, "each task finished once in the graph")
	pr, err := base.Process(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, workflow.ProcessFinished, pr.State)
	errMu.Lock()
	defer errMu.Unlock()
	if !assert.Zero(t, len(errs), "errors reported") {
		t.Logf("the first: %v", errs[0])
	}
}

// lockstep is a Store on which the releases read one graph in rounds: a read waits
// until every party still releasing waits to read, then the last to come reads the
// graph once for them all, so that they all hold the same version.
type lockstep struct {
	workflow.Store
	mu      sync.Mutex
	cond    *sync.Cond
	process string // the graph read in rounds; "" until watch
	parties int    // releases not yet returned
	waiting int
	round   int
	g       workflow.Graph // what the round read
	err     error
}

// watch starts the rounds on the graph of processID.
func (l *lockstep) watch(processID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.process = processID
}

// leave is called when a release returns: it takes part in no round any more.
func (l *lockstep) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parties--
	l.openIfAll(context.Background())
}

// openIfAll reads the graph for the round and opens it when every party waits. The
// caller holds mu.
func (l *lockstep) openIfAll(ctx context.Context) {
	if l.waiting == 0 || l.waiting < l.parties {
		return
	}
	l.g, l.err = l.Store.Graph(ctx, l.process)
	l.waiting = 0
	l.round++
	l.cond.Broadcast()
}

func (l *lockstep) Graph(ctx context.Context, processID string) (workflow.Graph, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if processID != l.process {
		return l.Store.Graph(ctx, processID)
	}
	round := l.round
	l.waiting++
	l.openIfAll(ctx)
	for l.round == round {
		l.cond.Wait()
	}
	g := l.g
	g.NotFinished, g.Finished = slices.Clone(g.NotFinished), slices.Clone(g.Finished)
	return g, l.err
}
