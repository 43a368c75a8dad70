package changes_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// rig is a simulator publishing on a fake clock, its API served behind a switch that
// can make it fail, and a feedapi client of it.
type rig struct {
	t      *testing.T
	clock  *clocktest.Fake
	sim    *feedtest.Simulator
	client *feedapi.Client
	fault  atomic.Int32 // one of the faults below
}

// Faults of the rig's API.
const (
	healthy     = iota
	unavailable // 503, as an API down for maintenance answers
	garbage     // 200 with a body that is no list
)

// start is where the rigs' clocks start: half a second into a second, so that the polls,
// every whole Interval after Run began, fall mid-second, and a change published just
// before a poll shares its second with one published just after.
var start = time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)

func newRig(t *testing.T, cfg feedtest.SimulatorConfig) *rig {
	t.Helper()
	r := &rig{t: t, clock: clocktest.NewFake(start)}
	cfg.Rate, cfg.Clock = feedtest.Unlimited, r.clock
	if cfg.Matches == 0 {
		cfg.Matches = 6
	}
	cfg.HistoryAge = 72 * time.Hour
	sim, err := feedtest.NewSimulator(feedtest.NewBroker(feedtest.BrokerOptions{}), cfg)
	require.NoError(t, err)
	r.sim = sim
	api := sim.APIHandler(feedtest.Account{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch r.fault.Load() {
		case unavailable:
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`<response response_code="SERVICE_UNAVAILABLE"><message>maintenance</message></response>`))
		case garbage:
			_, _ = w.Write([]byte(`<html>maintenance</html>`))
		default:
			api.ServeHTTP(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	// One attempt per request: the manager's next poll is its retry, and a retry's timer
	// on the wall clock would only slow the test.
	r.client, err = feedapi.NewClient(feedapi.Config{BaseURL: srv.URL, AccessToken: feedtest.DefaultAccessToken, MaxAttempts: 1})
	require.NoError(t, err)
	return r
}

// publish publishes n messages at the clock's time.
func (r *rig) publish(n int) {
	r.t.Helper()
	require.NoError(r.t, r.sim.Publish(r.t.Context(), n))
}

// published returns every change the simulator's traffic made so far, as its lists give
// them: an event and its message's second, for each fixture_change and bet_settlement.
func (r *rig) published() map[changes.Change]bool {
	out := map[changes.Change]bool{}
	for _, s := range r.sim.Sent() {
		var k changes.Kind
		switch {
		case s.Replay:
			continue
		case s.Key.Type == feed.MessageFixtureChange:
			k = changes.FixtureChange
		case s.Key.Type == feed.MessageBetSettlement:
			k = changes.ResultChange
		default:
			continue
		}
		at := s.Message.MessageHeader().Timestamp.UTC().Truncate(time.Second)
		out[changes.Change{Kind: k, Event: s.Key.Event, UpdatedAt: at}] = true
	}
	return out
}

// manager makes a manager on the rig's API and clock, and closes it when the test ends.
func (r *rig) manager(l changes.Listener, cfg changes.Config) *changes.Manager {
	r.t.Helper()
	cfg.Clock = r.clock
	m, err := changes.New(r.client, l, cfg)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m
}

// run runs m until the test ends, and waits for its first poll.
func (r *rig) run(m *changes.Manager) {
	r.t.Helper()
	done := make(chan error, 1)
	go func() { done <- m.Run(r.t.Context()) }()
	r.t.Cleanup(func() {
		_ = m.Close(context.Background())
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			r.t.Errorf("Run: %v", err)
		}
	})
	require.NoError(r.t, m.Flush(r.t.Context()))
}

// next moves the clock to m's next poll and waits for it.
func (r *rig) next(m *changes.Manager, interval time.Duration) {
	r.t.Helper()
	r.clock.Advance(interval)
	require.NoError(r.t, m.Flush(r.t.Context()))
}

// recorder is a Listener that records what it takes, when, and can be told to fail.
type recorder struct {
	clock *clocktest.Fake

	mu   sync.Mutex
	got  []changes.Change
	when []time.Time // the clock's time of each change taken
	fail func(changes.Change) error
	errs []error // what OnError received
}

func newRecorder(clk *clocktest.Fake) *recorder { return &recorder{clock: clk} }

func (r *recorder) OnChange(_ context.Context, c changes.Change) error {
	r.mu.Lock()
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(c); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, c)
	r.when = append(r.when, r.clock.Now())
	return nil
}

func (r *recorder) onError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *recorder) failWith(f func(changes.Change) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = f
}

func (r *recorder) changes() []changes.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]changes.Change(nil), r.got...)
}

// counts returns how many times each change was taken.
func (r *recorder) counts() map[changes.Change]int {
	out := map[changes.Change]int{}
	for _, c := range r.changes() {
		out[c]++
	}
	return out
}

func (r *recorder) errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// once returns want as counts of one each, for comparing with a recorder's counts.
func once(want map[changes.Change]bool) map[changes.Change]int {
	out := make(map[changes.Change]int, len(want))
	for c := range want {
		out[c] = 1
	}
	return out
}
