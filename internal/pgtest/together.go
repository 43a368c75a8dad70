package pgtest

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Together runs call n times at once, as processes starting together would: call i on
// pools[i%len(pools)], every call released at the same moment. When every call has
// returned, it reports each one that returned an error, naming it, and then, if any did,
// stops the test (t.FailNow), so that what follows may use every call's result. The backends' tests use it to check that New migrates an empty schema once,
// however many processes start on it together, and none of them fails.
func Together(t testing.TB, pools []*pgxpool.Pool, n int, call func(i int, pool *pgxpool.Pool) error) {
	t.Helper()
	if len(pools) == 0 || n <= 0 {
		t.Fatalf("pgtest: Together with %d pools and n = %d: want a pool and a call at least", len(pools), n)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = call(i, pools[i%len(pools)])
		})
	}
	close(start)
	wg.Wait()
	failed := false
	for i, err := range errs {
		if err != nil {
			t.Errorf("pgtest: call %d of %d, on pool %d: %v", i, n, i%len(pools), err)
			failed = true
		}
	}
	if failed {
		t.FailNow()
	}
}
