package feedkit_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedapi"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// replayListener records the replayed messages it processes, by request id, with a stamp
// of the global recorder's sequence taken as each call ends; while gate is closed it holds
// every replayed message.
type replayListener struct {
	global *feedtest.GlobalRecorder
	gate   chan struct{}

	mu       sync.Mutex
	live     int
	replayed map[int64][]replayedMsg
	changed  chan struct{}
}

type replayedMsg struct {
	event feed.URN
	typ   feed.MessageType
	stamp int64
}

func newReplayListener(global *feedtest.GlobalRecorder) *replayListener {
	return &replayListener{global: global, replayed: make(map[int64][]replayedMsg), changed: make(chan struct{})}
}

func (l *replayListener) handle(ctx context.Context, m feed.Message, event feed.URN) error {
	h := m.MessageHeader()
	if h.RequestID != 0 && l.gate != nil {
		select {
		case <-l.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	stamp := l.global.Stamp() // the call's work is done
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.RequestID == 0 {
		l.live++
	} else {
		l.replayed[h.RequestID] = append(l.replayed[h.RequestID], replayedMsg{event, m.Type(), stamp})
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

// waitLive waits until n live messages have been processed.
func (l *replayListener) waitLive(t *testing.T, n int) {
	t.Helper()
	for {
		l.mu.Lock()
		got, ch := l.live, l.changed
		l.mu.Unlock()
		if got >= n {
			require.Equal(t, n, got)
			return
		}
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatalf("%d live messages processed, want %d", got, n)
		}
	}
}

func (l *replayListener) of(id int64) []replayedMsg {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.replayed[id])
}

func (l *replayListener) OnOddsChange(ctx context.Context, m *feed.OddsChange) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnBetStop(ctx context.Context, m *feed.BetStop) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnBetSettlement(ctx context.Context, m *feed.BetSettlement) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnRollbackBetSettlement(ctx context.Context, m *feed.RollbackBetSettlement) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnBetCancel(ctx context.Context, m *feed.BetCancel) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnRollbackBetCancel(ctx context.Context, m *feed.RollbackBetCancel) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnFixtureChange(ctx context.Context, m *feed.FixtureChange) error {
	return l.handle(ctx, m, m.Event)
}
func (l *replayListener) OnUnparsableMessage(_ context.Context, m *feed.UnparsableMessage) error {
	return fmt.Errorf("unparsable message %s: %w", m.RoutingKey, m.Err)
}

// signalHandler is a slog.Handler that closes done at the first record with message msg.
type signalHandler struct {
	msg  string
	once *sync.Once
	done chan struct{}
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.done) })
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// eventRig is an SDK with two sessions (live and prematch) on the embedded broker, fed
// by the simulator's live producer, with the simulator's API.
type eventRig struct {
	sim       *feedtest.Simulator
	sdk       *feedkit.SDK
	global    *feedtest.GlobalRecorder
	listener  *replayListener
	completed chan struct{} // closed when the manager logs its first event recovery completed
}

const eventTraffic = 400 // messages published before the recoveries

func newEventRig(t *testing.T, threads int, gated bool) *eventRig {
	t.Helper()
	broker := feedtest.NewBroker(feedtest.BrokerOptions{})
	t.Cleanup(broker.Close)
	lo, _ := feed.LookupProducer(feed.DefaultProducers(), 1)
	sim, err := feedtest.NewSimulator(broker, feedtest.SimulatorConfig{Producers: []feed.Producer{lo}, Matches: 4,
		Rate: feedtest.Unlimited, Seed: 11})
	require.NoError(t, err)
	api := httptest.NewServer(sim.RecoveryHandler())
	t.Cleanup(api.Close)
	r := &eventRig{sim: sim, global: feedtest.NewGlobalRecorder(), completed: make(chan struct{})}
	r.listener = newReplayListener(r.global)
	if gated {
		r.listener.gate = make(chan struct{})
	}
	r.sdk, err = feedkit.New(feedkit.Config{Transport: broker, Node: feed.Node(1), Global: r.global,
		API:        feedapi.Config{BaseURL: api.URL, AccessToken: feedtest.DefaultAccessToken},
		Concurrent: delivery(threads),
		Logger:     slog.New(signalHandler{msg: "recovery: event recovery completed", once: &sync.Once{}, done: r.completed}),
	})
	require.NoError(t, err)
	require.NoError(t, r.sdk.AddSession(feed.LiveMessagesOnly, r.listener))
	require.NoError(t, r.sdk.AddSession(feed.PrematchMessagesOnly, r.listener))
	ctx := t.Context()
	require.NoError(t, r.sdk.Open(ctx))
	t.Cleanup(func() {
		if gated {
			select {
			case <-r.listener.gate:
			default:
				close(r.listener.gate)
			}
		}
		_ = r.sdk.Close(context.Background())
	})
	assert.Equal(t, "producer 1 down (InitialState)", r.global.RequireNext(t).String())
	// Each session's up names it; the two sessions report on goroutines of their own.
	assert.ElementsMatch(t, []string{"connection up on session 0 (live messages only)", "connection up on session 1 (prematch messages only)"},
		[]string{r.global.RequireNext(t).String(), r.global.RequireNext(t).String()}, "each session's")
	require.NoError(t, sim.Publish(ctx, eventTraffic))
	r.listener.waitLive(t, eventTraffic)
	return r
}

// expectedReplay is what the simulator resends for a recovery of event ev: its latest
// odds_change, or every stateful message (settlements, cancellations, their rollbacks).
func expectedReplay(sent []feedtest.Sent, ev feed.URN, stateful bool) []feed.MessageType {
	var out []feed.MessageType
	for _, s := range sent {
		if s.Replay || s.Key.Event != ev {
			continue
		}
		switch t := s.Key.Type; {
		case !stateful && t == feed.MessageOddsChange:
			out = []feed.MessageType{t}
		case stateful && t != feed.MessageOddsChange && t != feed.MessageBetStop && t != feed.MessageFixtureChange:
			out = append(out, t)
		}
	}
	return out
}

// eventsWithStateful returns the events of sent with stateful messages, most first.
func eventsWithStateful(sent []feedtest.Sent) []feed.URN {
	count := map[feed.URN]int{}
	for _, s := range sent {
		count[s.Key.Event] += len(expectedReplay([]feedtest.Sent{s}, s.Key.Event, true))
	}
	var out []feed.URN
	for ev, n := range count {
		if n > 0 {
			out = append(out, ev)
		}
	}
	slices.SortFunc(out, func(a, b feed.URN) int {
		if d := count[b] - count[a]; d != 0 {
			return d
		}
		return int(a.ID - b.ID)
	})
	return out
}

// checkReplay checks that the replay of request id is exactly want, of event ev, and that
// every message of it was processed before done, the call that said it was complete.
func checkReplay(t *testing.T, l *replayListener, id int64, ev feed.URN, want []feed.MessageType, done feedtest.GlobalCall) {
	t.Helper()
	got := l.of(id)
	var types []feed.MessageType
	for _, m := range got {
		types = append(types, m.typ)
		assert.Equal(t, ev, m.event)
		assert.Less(t, m.stamp, done.Seq, "request %d: a replayed message was processed after %s", id, done)
	}
	assert.Equal(t, want, types, "request %d", id)
}

// An event's recovery, odds and stateful, end to end with the simulator, serially and
// with the concurrent listener: the replayed messages reach the listener with the request
// id, exactly those the simulator resends, and OnEventRecoveryCompleted is held while
// they are being processed (the listener holds them until the manager has logged the
// completion it told the SDK's global listener), then comes after the last of them.
func TestRecoverEventEndToEnd(t *testing.T) {
	for _, threads := range []int{0, 4} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			r := newEventRig(t, threads, true)
			ctx := t.Context()
			sent := r.sim.Sent()
			evs := eventsWithStateful(sent)
			require.NotEmpty(t, evs)
			ev := evs[0]
			want := expectedReplay(sent, ev, true)
			require.GreaterOrEqual(t, len(want), 1)

			id, err := r.sdk.RecoverEventStateful(ctx, 1, ev)
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprintf("event stateful recovery #%d of producer 1 initiated for %s", id, ev), r.global.RequireNext(t).String())
			select {
			case <-r.completed:
			case <-ctx.Done():
				t.Fatal("the manager never completed the event recovery")
			}
			r.global.RequireNone(t)
			assert.Empty(t, r.listener.of(id), "held at the gate")
			close(r.listener.gate)
			done := r.global.RequireNext(t)
			assert.Equal(t, fmt.Sprintf("event recovery #%d of producer 1 completed for %s", id, ev), done.String())
			checkReplay(t, r.listener, id, ev, want, done)

			odds, err := r.sdk.RecoverEvent(ctx, 1, ev)
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprintf("event recovery #%d of producer 1 initiated for %s", odds, ev), r.global.RequireNext(t).String())
			done = r.global.RequireNext(t)
			assert.Equal(t, fmt.Sprintf("event recovery #%d of producer 1 completed for %s", odds, ev), done.String())
			checkReplay(t, r.listener, odds, ev, []feed.MessageType{feed.MessageOddsChange}, done)

			st := r.sdk.Stats().Recovery
			assert.Equal(t, uint64(2), st.EventRecoveriesRequested)
			assert.Equal(t, uint64(2), st.EventRecoveriesCompleted)
			assert.Len(t, r.sim.RecoveryRequests(), 2)
		})
	}
}

// Event recoveries asked for at once, odds and stateful of several events, each complete
// after exactly its own replayed messages were processed, serially and with the
// concurrent listener.
func TestRecoverEventsConcurrently(t *testing.T) {
	for _, threads := range []int{0, 4} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			r := newEventRig(t, threads, false)
			ctx := t.Context()
			sent := r.sim.Sent()
			evs := eventsWithStateful(sent)
			evs = evs[:min(len(evs), 4)]
			require.GreaterOrEqual(t, len(evs), 2)
			type ask struct {
				ev       feed.URN
				stateful bool
			}
			var asks []ask
			for _, ev := range evs {
				asks = append(asks, ask{ev, false}, ask{ev, true})
			}
			ids := make([]int64, len(asks))
			var wg sync.WaitGroup
			for i, a := range asks {
				wg.Go(func() {
					var err error
					if a.stateful {
						ids[i], err = r.sdk.RecoverEventStateful(ctx, 1, a.ev)
					} else {
						ids[i], err = r.sdk.RecoverEvent(ctx, 1, a.ev)
					}
					assert.NoError(t, err)
				})
			}
			wg.Wait()
			byID := map[int64]ask{}
			for i, id := range ids {
				byID[id] = asks[i]
			}
			require.Len(t, byID, len(asks), "every request has its own id")
			initiated := map[int64]int64{}
			total, replayed := 0, 0
			for range 2 * len(asks) {
				c := r.global.RequireNext(t)
				switch c.Kind {
				case feedtest.CallRecoveryInitiated:
					a, ok := byID[c.Recovery.RequestID]
					require.True(t, ok, c.String())
					assert.Equal(t, a.ev, c.Recovery.Event)
					initiated[c.Recovery.RequestID] = c.Seq
				case feedtest.CallEventRecoveryCompleted:
					id := c.EventRecovery.RequestID
					a, ok := byID[id]
					require.True(t, ok, c.String())
					require.Contains(t, initiated, id, "initiated before completed")
					want := expectedReplay(sent, a.ev, a.stateful)
					checkReplay(t, r.listener, id, a.ev, want, c)
					total += len(want)
					replayed += len(r.listener.of(id))
				default:
					t.Fatalf("unexpected call %s", c)
				}
			}
			assert.Equal(t, total, replayed)
			st := r.sdk.Stats().Recovery
			assert.Equal(t, uint64(len(asks)), st.EventRecoveriesRequested)
			assert.Equal(t, uint64(len(asks)), st.EventRecoveriesCompleted)
			require.NoError(t, r.sdk.Close(context.Background()))
			r.global.RequireNone(t)
		})
	}
}
