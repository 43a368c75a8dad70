package otelfeedkit_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/otelfeedkit"
	"github.com/feedkit/feedkit/recovery"
)

// epoch is when the tests' fake clock starts.
var epoch = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// heldSDK is an SDK on the embedded broker, open, with producer 1 up, the names of two
// languages read, and its listener holding one message while the others wait: every
// level of its Stats is still, and most are not zero.
type heldSDK struct {
	sdk     *feedkit.SDK
	clock   *clocktest.Fake
	m       *otelfeedkit.Metrics
	reader  *sdkmetric.ManualReader
	waiting int // messages published after the one held
}

// openHeldSDK builds a heldSDK, with a shared pool of one worker named pool, or serial
// delivery when pool is "".
func openHeldSDK(t *testing.T, pool string) heldSDK {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	clk := clocktest.NewFake(epoch)
	var opts []otelfeedkit.Option
	var cc *concurrent.Config
	if pool != "" {
		cc = &concurrent.Config{Threads: 1, Name: pool}
		opts = append(opts, otelfeedkit.WithPoolName(pool))
	}
	m, reader := newMetrics(t, append(opts, otelfeedkit.WithClock(clk))...)

	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{
		Matches: 1, Rate: feedtest.Unlimited, Seed: 3, Producers: []feed.Producer{lo}, Clock: clk})
	require.NoError(t, err)
	api := httptest.NewServer(sim.APIHandler(feedtest.Account{}))
	t.Cleanup(api.Close)

	// The listener holds the first message after hold is set until release closes.
	var hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	rec := feedtest.NewRecorder()
	rec.Hook = func(feed.Message) error {
		if hold.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		return nil
	}
	global := feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		Transport:  broker,
		Node:       feed.Node(1),
		Global:     global,
		API:        feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
		Recovery:   recovery.Config{Producers: []feed.Producer{lo}},
		Clock:      clk,
		Concurrent: cc,
		Observer:   m,
	})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	require.NoError(t, sdk.Open(ctx))
	// release first: a test that failed with a message held must not hang in Close.
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		_ = sdk.Close(context.Background())
	})
	require.Equal(t, "producer 1 down (InitialState)", global.RequireNext(t).String())
	require.Equal(t, feedtest.CallConnectionUp, global.RequireNext(t).Kind)

	// The first alive brings the first recovery, then the producer is up.
	require.NoError(t, sim.SendAlive(ctx, lo.ID, true))
	require.Equal(t, feedtest.CallRecoveryInitiated, global.RequireNext(t).Kind)
	require.Equal(t, "producer 1 up (FirstRecoveryCompleted)", global.RequireNext(t).String())
	for _, lang := range []string{"en", "de"} {
		require.NoError(t, sdk.Names().Refresh(ctx, lang))
	}
	// Time passes since the alive; the SDK acts on what it made due.
	clk.Advance(2500 * time.Millisecond)
	require.NoError(t, broker.Flush(ctx))
	require.NoError(t, sdk.Flush(ctx))

	// One message held by the listener, the others waiting behind it (one match: one
	// queue), all of them read by the session.
	const published = 20
	hold.Store(true)
	require.NoError(t, sim.Publish(ctx, published))
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the listener was not called")
	}
	require.NoError(t, broker.Flush(ctx))
	return heldSDK{sdk: sdk, clock: clk, m: m, reader: reader, waiting: published - 1}
}

// watched are the metrics WatchSDK reports.
var watched = []string{"feedkit.pool.backlog", "feedkit.pool.running", "feedkit.producer.up",
	"feedkit.producer.alive.age", "feedkit.cache.entries", "feedkit.transport.connected", "feedkit.transport.received"}

// WatchSDK reports the levels of a real SDK as its Stats have them, read once per
// collection: the pool's backlog and running call, the producer up and the age of its
// alive on the SDK's clock, the names' caches' entries. The embedded broker is no
// RabbitMQ transport: no transport level is reported.
func TestWatchSDKReportsTheLevelsOfStats(t *testing.T) {
	for _, pool := range []string{"workers", ""} {
		t.Run(fmt.Sprintf("pool=%q", pool), func(t *testing.T) {
			h := openHeldSDK(t, pool)
			// Without WatchSDK, no level.
			got := collect(t, h.reader)
			for _, name := range watched {
				assert.NotContains(t, got, name)
			}

			reg, err := h.m.WatchSDK(h.sdk)
			require.NoError(t, err)
			got = collect(t, h.reader)
			st := h.sdk.Stats()

			// The pool: the shared one by the name given, or the serial session's.
			if pool != "" {
				require.NotNil(t, st.Pool)
				assert.Equal(t, 1, st.Pool.Running, "the listener holds one message")
				assert.Positive(t, st.Pool.Queued, "messages wait behind the one held")
				assert.LessOrEqual(t, st.Pool.Queued, h.waiting)
				pa := []string{"feedkit.pool=" + pool}
				assert.Equal(t, []point{{attrs: pa, value: float64(st.Pool.Queued)}}, points(got["feedkit.pool.backlog"]))
				assert.Equal(t, []point{{attrs: pa, value: 1}}, points(got["feedkit.pool.running"]))
			} else {
				require.Nil(t, st.Pool)
				q := st.Delivery[0].Serial.Queued
				assert.Equal(t, h.waiting, q, "every message after the one held waits in the session's queue")
				assert.Equal(t, []point{{attrs: []string{"feedkit.pool=session 0"}, value: float64(q)}},
					points(got["feedkit.pool.backlog"]))
				assert.NotContains(t, got, "feedkit.pool.running", "a serial session does not count its running call")
			}

			// The producer, up, its last alive 2.5 s old on the SDK's clock.
			require.Len(t, st.Producers, 1)
			require.True(t, st.Producers[0].Up)
			age := h.clock.Now().Sub(st.Producers[0].LastAliveAt)
			assert.GreaterOrEqual(t, age, 2500*time.Millisecond)
			p1 := []string{"feedkit.producer=1"}
			assert.Equal(t, []point{{attrs: p1, value: 1}}, points(got["feedkit.producer.up"]))
			assert.Equal(t, []point{{attrs: p1, value: age.Seconds()}}, points(got["feedkit.producer.alive.age"]))

			// The caches: each by its name, as Stats count their entries.
			n := st.Names
			require.NotNil(t, n)
			assert.Equal(t, 2, n.Markets.Entries, "one per language")
			d := st.SportData
			require.NotNil(t, d)
			assert.Equal(t, []point{
				{attrs: []string{"feedkit.cache=categories"}, value: float64(d.Categories.Entries)},
				{attrs: []string{"feedkit.cache=competitor_profiles"}, value: float64(d.Competitors.Entries)},
				{attrs: []string{"feedkit.cache=event_summaries"}, value: float64(d.Summaries.Entries)},
				{attrs: []string{"feedkit.cache=fixtures"}, value: float64(d.Fixtures.Entries)},
				{attrs: []string{"feedkit.cache=markets"}, value: float64(n.Markets.Entries)},
				{attrs: []string{"feedkit.cache=player_profiles"}, value: float64(d.Players.Entries)},
				{attrs: []string{"feedkit.cache=profiles"}, value: float64(n.Profiles.Entries)},
				{attrs: []string{"feedkit.cache=seasons"}, value: float64(d.Seasons.Entries)},
				{attrs: []string{"feedkit.cache=single_variants"}, value: float64(n.SingleVariants.Entries)},
				{attrs: []string{"feedkit.cache=sports"}, value: float64(d.Sports.Entries)},
				{attrs: []string{"feedkit.cache=summaries"}, value: float64(n.Summaries.Entries)},
				{attrs: []string{"feedkit.cache=tournaments"}, value: float64(d.Tournaments.Entries)},
				{attrs: []string{"feedkit.cache=variants"}, value: float64(n.Variants.Entries)},
			}, points(got["feedkit.cache.entries"]))

			require.Nil(t, st.Transport)
			assert.NotContains(t, got, "feedkit.transport.connected")
			assert.NotContains(t, got, "feedkit.transport.received")

			// Time moves on the SDK's clock: the next collection reads Stats and the clock
			// again.
			h.clock.Advance(time.Second)
			got = collect(t, h.reader)
			assert.Equal(t, []point{{attrs: p1, value: (age + time.Second).Seconds()}}, points(got["feedkit.producer.alive.age"]))

			// Unregistered, the levels are no longer reported.
			require.NoError(t, reg.Unregister())
			got = collect(t, h.reader)
			for _, name := range watched {
				assert.NotContains(t, got, name)
			}
		})
	}
}

// One Metrics watches one SDK: a second WatchSDK is refused, with why, until the first
// is unregistered.
func TestWatchSDKRefusesASecondSDK(t *testing.T) {
	m, reader := newMetrics(t)
	a := newClosedSDK(t)
	b := newClosedSDK(t)
	_, err := m.WatchSDK(nil)
	assert.EqualError(t, err, "otelfeedkit: WatchSDK: the SDK is nil")
	reg, err := m.WatchSDK(a)
	require.NoError(t, err)
	for _, sdk := range []*feedkit.SDK{a, b} {
		_, err = m.WatchSDK(sdk)
		assert.EqualError(t, err, "otelfeedkit: WatchSDK: an SDK is watched already; a Metrics serves one SDK (unregister the first to watch another)")
	}
	require.NoError(t, reg.Unregister())
	require.NoError(t, reg.Unregister(), "a second Unregister does nothing")
	reg, err = m.WatchSDK(b)
	require.NoError(t, err)
	// b's producer, down, is reported: the registration in force is b's.
	got := collect(t, reader)
	assert.Equal(t, []point{{attrs: []string{"feedkit.producer=1"}, value: 0}}, points(got["feedkit.producer.up"]))
	require.NoError(t, reg.Unregister())
}

// newClosedSDK builds an SDK that is never opened: its Stats have its producer, down.
func newClosedSDK(t *testing.T) *feedkit.SDK {
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sdk, err := feedkit.New(feedkit.Config{Transport: broker,
		Recovery: recovery.Config{Producers: []feed.Producer{lo}, Disabled: true}})
	require.NoError(t, err)
	return sdk
}
