package feed_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// schemaTraffic publishes n messages that lack a required attribute (cycling through bet
// stops without groups, settlements without certainty, fixture changes without a start
// time and odds changes with an incomplete status) between messages that lack nothing, and
// returns how many it published in all.
func schemaTraffic(t *testing.T, broker *feedtest.Broker, n int) int {
	t.Helper()
	ctx := t.Context()
	total := 0
	publish := func(m feed.Message) {
		h := m.MessageHeader()
		key := feed.RoutingKey{Priority: feed.PriorityHigh, Live: true, Type: m.Type(), SportID: 1, Event: h.Event}
		require.NoError(t, broker.Publish(ctx, key.String(), feedtest.Marshal(m)))
		total++
	}
	for i := range n {
		h := feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: int64(1 + i%7)}, Timestamp: time.UnixMilli(int64(1000 + i)).UTC()}
		good := h
		publish(&feed.BetStop{Header: good, Groups: "all"})
		h.SchemaViolations = []feed.SchemaViolation{feed.MissingGroups, feed.MissingCertainty, feed.MissingStartTime, feed.MissingMatchStatus}[i%4]
		switch i % 4 {
		case 0:
			publish(&feed.BetStop{Header: h})
		case 1:
			publish(&feed.BetSettlement{Header: h})
		case 2:
			publish(&feed.FixtureChange{Header: h, ChangeType: 1})
		default:
			publish(&feed.OddsChange{Header: h, EventStatus: &feed.SportEventStatus{Status: 1}})
		}
	}
	return total
}

// Every message that lacks a required attribute reaches the listener, flagged, and the
// session counts each exactly once, with the serial dispatcher and with the concurrent
// one.
func TestSessionCountsSchemaViolations(t *testing.T) {
	const n = 200
	for _, name := range []string{"serial", "concurrent"} {
		t.Run(name, func(t *testing.T) {
			broker := newBroker(t, feedtest.BrokerOptions{})
			rec := newRecorder(2 * n)
			cfg := feed.SessionConfig{Listener: rec}
			if name == "concurrent" {
				c, err := concurrent.NewDispatcher(rec, concurrent.NewTaskLifecycleTracker(), concurrent.Config{Threads: 2})
				require.NoError(t, err)
				cfg = feed.SessionConfig{Dispatcher: c}
			}
			s := openSession(t, broker, cfg)
			total := schemaTraffic(t, broker, n)
			require.Equal(t, 2*n, total)
			rec.wait(t)
			require.NoError(t, s.Close(context.Background()))

			flagged := 0
			for _, m := range rec.Messages() {
				if v := m.MessageHeader().SchemaViolations; v != 0 {
					flagged++
					assert.Contains(t, []feed.SchemaViolation{feed.MissingGroups, feed.MissingCertainty, feed.MissingStartTime, feed.MissingMatchStatus}, v)
				}
			}
			assert.Len(t, rec.Messages(), 2*n, "every message reached the listener")
			assert.Empty(t, rec.Unparsable(), "none was refused")
			assert.Equal(t, n, flagged)
			st := s.Stats()
			assert.Equal(t, uint64(n), st.SchemaViolations, "each flagged message counted once")
			assert.Equal(t, uint64(2*n), st.Events)
		})
	}
}
