package feedkit_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// A graceful Close saves each producer's latest recovery point before it returns: the
// store holds the last alive processed, not the point of the manager's last check, so a
// restart after SIGINT replays nothing more than it must. The check interval is an hour
// here and the alives seconds apart: only Close can have saved the point.
func TestCloseSavesTheLatestRecoveryPoint(t *testing.T) {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	clk := clocktest.NewFake(envEpoch)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 3, Clock: clk})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)
	env := feedkit.CustomEnvironment("", api.URL)
	path := filepath.Join(t.TempDir(), "producers.json")
	global := feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		Environment: &env, AccessToken: feedtest.DefaultAccessToken, Transport: broker, Node: feed.Node(1),
		Global:   global,
		Recovery: recovery.Config{Store: recovery.NewFileStore(path), CheckInterval: time.Hour},
		Clock:    clk,
	})
	require.NoError(t, err)
	rec := feedtest.NewRecorder()
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	require.NoError(t, sdk.Open(t.Context()))
	t.Cleanup(func() { _ = sdk.Close(context.Background()) })

	ctx := t.Context()
	require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
	for global.RequireNext(t).String() != "producer 1 up (FirstRecoveryCompleted)" {
	}
	var last time.Time
	for range 5 {
		clk.Advance(5 * time.Second)
		require.NoError(t, sim.Publish(ctx, 20))
		require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
		last = clk.Now().Truncate(time.Millisecond)
		// The clock must not run ahead of the reading: an alive read late would look
		// like a missing heartbeat.
		require.NoError(t, broker.Flush(ctx))
		require.NoError(t, sdk.Flush(ctx))
	}
	st, _ := sdk.Producer(lo.ID)
	require.Equal(t, last, st.LastSubscribedAt, "the point follows the last alive processed")
	saved := loadRecord(t, path, lo.ID)
	require.True(t, saved.LastSubscribedAt.Before(last), "the store lags while the SDK runs (at most a check interval)")

	require.NoError(t, sdk.Close(ctx))
	assert.Equal(t, last, loadRecord(t, path, lo.ID).LastSubscribedAt, "Close saved the latest point")
	assert.Equal(t, 100, rec.Len(), "every message published was processed before the point moved past it")
}

// loadRecord reads producer's record from a FileStore at path.
func loadRecord(t *testing.T, path string, producer int) recovery.Record {
	t.Helper()
	recs, err := recovery.NewFileStore(path).Load(t.Context())
	require.NoError(t, err)
	for _, r := range recs {
		if r.Producer == producer {
			return r
		}
	}
	t.Fatalf("no record of producer %d in %s", producer, path)
	return recovery.Record{}
}
