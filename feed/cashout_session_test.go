package feed_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// noCashout is a recorder that is not a feed.CashoutListener.
type noCashout struct{ feed.OddsFeedListener }

// publishCashouts publishes n cashouts and n bet stops, alternating, over a few matches.
func publishCashouts(t *testing.T, broker *feedtest.Broker, n int) {
	t.Helper()
	for i := range n {
		h := feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: int64(1 + i%5)}, Timestamp: time.UnixMilli(int64(1 + i)).UTC()}
		for _, m := range []feed.Message{
			&feed.Cashout{Header: h, Markets: []feed.OddsMarket{{ID: 1, Outcomes: []feed.OddsOutcome{{ID: "1", Probability: 0.5, HasProbability: true}}}}},
			&feed.BetStop{Header: h, Groups: "all", MarketStatus: feed.MarketSuspended},
		} {
			key := feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: m.Type(), SportID: 1, Event: h.Event}
			require.NoError(t, broker.Publish(t.Context(), key.String(), feedtest.Marshal(m)))
		}
	}
}

// A cashout reaches a listener that implements feed.CashoutListener, through every
// dispatcher; for one that does not, it is counted as unhandled and the stream goes on.
func TestSessionDeliversCashoutsToACashoutListener(t *testing.T) {
	const n = 100
	for _, name := range []string{"serial", "concurrent", "concurrent with call hooks", "concurrent serial"} {
		for _, takes := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/cashout listener", false: "/plain listener"}[takes], func(t *testing.T) {
				broker := newBroker(t, feedtest.BrokerOptions{})
				rec := feedtest.NewRecorder()
				var l feed.OddsFeedListener = rec
				want := 2 * n
				if !takes {
					l, want = noCashout{rec}, n
				}
				var returned atomic.Int64
				cfg := feed.SessionConfig{Listener: l}
				tracker := concurrent.NewTaskLifecycleTracker()
				switch name {
				case "concurrent with call hooks":
					tracker.OnCallReturned(func(*feed.Header) { returned.Add(1) })
					fallthrough
				case "concurrent":
					c, err := concurrent.NewDispatcher(l, tracker, concurrent.Config{Threads: 2})
					require.NoError(t, err)
					cfg = feed.SessionConfig{Dispatcher: c}
				case "concurrent serial":
					tracker.OnCallReturned(func(*feed.Header) { returned.Add(1) })
					c, err := concurrent.NewSerialDispatcher(l, tracker, concurrent.SerialConfig{})
					require.NoError(t, err)
					cfg = feed.SessionConfig{Dispatcher: c}
				}
				s := openSession(t, broker, cfg)
				publishCashouts(t, broker, n)
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				require.NoError(t, rec.Wait(ctx, want))
				require.NoError(t, s.Close(context.Background()))

				cashouts := 0
				for _, m := range rec.Messages() {
					if c, ok := m.(*feed.Cashout); ok {
						cashouts++
						assert.Equal(t, 0.5, c.Markets[0].Outcomes[0].Probability)
					}
				}
				st := s.Stats()
				assert.Len(t, rec.Messages(), want)
				assert.Empty(t, rec.Unparsable())
				assert.Equal(t, uint64(2*n), st.Events, "every cashout was routed as an event message")
				if takes {
					assert.Equal(t, n, cashouts)
					assert.Zero(t, st.Unhandled)
				} else {
					assert.Zero(t, cashouts)
					assert.Equal(t, uint64(n), st.Unhandled, "each cashout the listener cannot take is counted")
				}
				if name == "concurrent with call hooks" || name == "concurrent serial" {
					assert.Equal(t, int64(want), returned.Load(), "the hooks see exactly the calls made")
				}
			})
		}
	}
}
