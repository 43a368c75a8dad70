package feedkit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/internal/pgtest"
	"github.com/feedkit/feedkit/recovery"
	"github.com/feedkit/feedkit/recovery/pgstore"
)

// Two SDK instances of one account, with different node ids, on one feed and one
// PostgreSQL ledger: every producer's first alive makes both ask for a recovery, four
// requests in all, and the account's limit (here two per ten minutes, to keep the test
// short) lets exactly two reach the API; the others are refused and reported.
func TestTwoSDKsSharingAPostgreSQLLedgerNeverExceedALimit(t *testing.T) {
	pool := pgtest.Pool(t)
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	producers := feed.DefaultProducers()[:2] // LO and Ctrl
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: producers})
	require.NoError(t, err)
	api := sim.NewRecoveryServer()
	t.Cleanup(api.Close)
	limits := recovery.Limits{{Windows: []recovery.Window{{Length: 10 * time.Minute, Max: 2}}}}

	var refused atomic.Int32
	refusedOne := make(chan struct{}, 8)
	initiated := initiations(make(chan feed.RecoveryInitiated, 8)) // both nodes'

	for node := 1; node <= 2; node++ {
		ledger, err := pgstore.NewLedger(t.Context(), pool, pgstore.Options{})
		require.NoError(t, err)
		sdk, err := feedkit.New(feedkit.Config{
			Transport: broker,
			Node:      feed.Node(node),
			Global:    initiated,
			API:       feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
			Recovery:  recovery.Config{Producers: producers, Limits: limits, Ledger: ledger},
			OnError: func(err error) {
				if errors.Is(err, recovery.ErrRateLimited) {
					refused.Add(1)
					refusedOne <- struct{}{}
				}
			},
		})
		require.NoError(t, err)
		require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
		require.NoError(t, sdk.Open(t.Context()))
		t.Cleanup(func() { _ = sdk.Close(context.Background()) })
	}
	// Open has bound both sessions' queues: the alives reach both nodes.
	for _, p := range producers {
		require.NoError(t, sim.SendAlive(t.Context(), p.ID, true))
	}
	for range 2 {
		select {
		case <-refusedOne:
		case <-time.After(30 * time.Second):
			t.Fatal("no refusal reported")
		}
	}
	for range 2 { // the API has the request before the SDK hears it was accepted
		select {
		case <-initiated:
		case <-time.After(30 * time.Second):
			t.Fatal("no recovery initiated")
		}
	}
	reqs := sim.RecoveryRequests()
	assert.Len(t, reqs, 2, "the account's limit, across both nodes")
	assert.Equal(t, int32(2), refused.Load())
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM feedkit_recovery_requests").Scan(&n))
	assert.Equal(t, 2, n, "the ledger holds the successful requests only")
}

// initiations is a global listener that passes on each recovery initiated.
type initiations chan feed.RecoveryInitiated

func (c initiations) OnConnectionDown(context.Context, feed.SessionRef, error)              {}
func (c initiations) OnConnectionUp(context.Context, feed.SessionRef)                       {}
func (c initiations) OnProducerStatusChange(context.Context, feed.ProducerStatus)           {}
func (c initiations) OnEventRecoveryCompleted(context.Context, feed.EventRecoveryCompleted) {}
func (c initiations) OnRecoveryInitiated(_ context.Context, r feed.RecoveryInitiated)       { c <- r }
