package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/recovery"
)

// Two recovery managers with different node ids, as two SDK processes of one account,
// share a PostgreSQL ledger: 30 producers need a short recovery at the same instant, the
// account may make 20 such requests in 10 minutes, so exactly 20 go out at once, and the
// other 10 are refused and sent when the window allows, 10 minutes later, not before.
func TestTwoNodesSharingALedgerNeverExceedALimit(t *testing.T) {
	pool := pgtest.Pool(t)
	clk := clocktest.NewFake(t0)
	calls := make(chan string, 64)
	refused := make(chan error, 64)
	var producers [2][]feed.Producer
	for i := range 30 {
		p := feed.Producer{ID: i + 1, Name: fmt.Sprintf("P%d", i+1), APIPath: fmt.Sprintf("p%d", i+1),
			Scope: feed.ScopeLive, MaxRecoveryWindow: 72 * time.Hour, HeartbeatLimit: feed.LiveHeartbeatLimit}
		producers[i%2] = append(producers[i%2], p)
	}
	var managers [2]*recovery.Manager
	for n := range managers {
		pl := pool
		if n == 1 {
			pl = pgtest.SecondPool(t, pool)
		}
		api := requesterFunc(func(_ context.Context, p feed.Producer, _ time.Time, id int64) error {
			calls <- fmt.Sprintf("node %d producer %d at %s", n+1, p.ID, clk.Now().Format(time.TimeOnly))
			return nil
		})
		m, err := recovery.NewManager(api, nil, feed.Node(n+1), recovery.Config{
			Producers: producers[n],
			Account:   "acme",
			Ledger:    newLedger(t, pl),
			Store:     newStore(t, pl),
			Clock:     clk,
			OnError: func(err error) {
				if errors.Is(err, recovery.ErrRateLimited) {
					refused <- err
				}
			},
		})
		require.NoError(t, err)
		require.NoError(t, m.Open(t.Context()))
		t.Cleanup(func() { _ = m.Close(context.Background()) })
		managers[n] = m
	}
	// Every producer's first alive: each needs a recovery of the last 10 minutes.
	for n, m := range managers {
		for _, p := range producers[n] {
			alive := &feed.Alive{Header: feed.Header{Producer: p.ID, Timestamp: t0}, Subscribed: true}
			m.HandleSystem(feed.Event{Key: feed.RoutingKey{Type: feed.MessageAlive}, Body: feedtest.Marshal(alive), Producer: p.ID})
		}
	}
	var sent []string
	for range 20 {
		sent = append(sent, next(t, calls))
	}
	var retryAt []time.Time
	for range 10 {
		var re *recovery.RequestError
		require.ErrorAs(t, nextErr(t, refused), &re)
		retryAt = append(retryAt, re.RetryAt)
	}
	for _, at := range retryAt {
		assert.True(t, at.Equal(t0.Add(10*time.Minute)), "retry at the window's edge: %v", at)
	}
	select {
	case c := <-calls:
		t.Fatalf("a 21st request went out: %s", c)
	default:
	}
	perNode := map[string]int{}
	for _, c := range sent {
		perNode[c[:6]]++
	}
	assert.Equal(t, 20, perNode["node 1"]+perNode["node 2"])
	assert.Positive(t, perNode["node 1"], "both nodes took places: %v", perNode)
	assert.Positive(t, perNode["node 2"], "both nodes took places: %v", perNode)

	// One nanosecond before the edge nothing moves; at the edge the other 10 go. Each
	// step waits until both managers have acted on the clock's new time.
	flush := func() {
		for _, m := range managers {
			require.NoError(t, m.Flush(t.Context()))
		}
	}
	flush()
	clk.Advance(10*time.Minute - time.Nanosecond)
	flush()
	select {
	case c := <-calls:
		t.Fatalf("a request before the window allowed it: %s", c)
	default:
	}
	clk.Advance(time.Nanosecond)
	flush()
	for range 10 {
		assert.Contains(t, next(t, calls), "at 12:10:00")
	}
}

type requesterFunc func(ctx context.Context, p feed.Producer, after time.Time, id int64) error

func (f requesterFunc) InitiateRecovery(ctx context.Context, p feed.Producer, after time.Time, id int64) error {
	return f(ctx, p, after, id)
}

func next(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(time.Minute):
		t.Fatal("no recovery request")
		return ""
	}
}

func nextErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(time.Minute):
		t.Fatal("no refusal reported")
		return nil
	}
}
