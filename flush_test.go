package feedkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/concurrent"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/recovery"
)

// Broker.Flush then SDK.Flush wait until everything published has been processed: while
// the listener is held, SDK.Flush waits; once it returns, every message has been through
// the listener, counted exactly, with nothing to poll. Serially and on the workers.
func TestFlushWaitsUntilEverythingPublishedIsProcessed(t *testing.T) {
	for _, c := range []struct {
		name       string
		concurrent *concurrent.Config
	}{{"serial", nil}, {"concurrent", &concurrent.Config{Threads: 4}}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang
			defer cancel()
			broker := feedtest.NewBroker(feedtest.BrokerOptions{})
			t.Cleanup(broker.Close)
			gate, entered := make(chan struct{}), make(chan struct{}, 100)
			rec := feedtest.NewRecorder()
			rec.Hook = func(feed.Message) error {
				entered <- struct{}{}
				<-gate
				return nil
			}
			lo := mustProducer(t, 1)
			sdk, err := feedkit.New(feedkit.Config{Transport: broker,
				Recovery:   recovery.Config{Producers: []feed.Producer{lo}, Disabled: true},
				Concurrent: c.concurrent})
			require.NoError(t, err)
			require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
			require.NoError(t, sdk.Open(ctx))
			var opened bool
			openGate := func() {
				if !opened {
					opened = true
					close(gate)
				}
			}
			// The gate opens first: a test that failed with a call held must not hang in Close.
			t.Cleanup(func() { openGate(); _ = sdk.Close(context.Background()) })
			require.NoError(t, broker.Flush(ctx))
			require.NoError(t, sdk.Flush(ctx), "nothing published: nothing to wait for")

			const n = 40
			for i := range n {
				m := &feed.OddsChange{Header: feed.Header{Producer: 1, Event: feed.MustParseURN(fmt.Sprintf("sr:match:%d", 1+i%8)),
					Timestamp: time.UnixMilli(1764152400000 + int64(i)).UTC()}}
				require.NoError(t, broker.Publish(ctx, feedtest.KeyFor(m, lo, 1).String(), feedtest.Marshal(m)))
			}
			require.NoError(t, broker.Flush(ctx))
			flushed := make(chan error, 1)
			go func() { flushed <- sdk.Flush(ctx) }()
			<-entered // a listener call is held: Flush cannot be done, whatever the scheduling
			select {
			case err := <-flushed:
				t.Fatalf("Flush returned (%v) while a listener call was held", err)
			default:
			}
			openGate()
			require.NoError(t, <-flushed)
			assert.Equal(t, n, rec.Len(), "every message processed when Flush returned")
			assert.Equal(t, uint64(n), sdk.Stats().Sessions[0].Events)
		})
	}
}
