package rabbitmq_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
)

// waitTimeout bounds every wait of these tests: a hang is a bug, not slowness.
const waitTimeout = 60 * time.Second

// broker is a virtual host of the test's own on the test broker.
type broker struct {
	url  string
	name string // the connection name of the test's transports, for CloseAMQPConnections
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9-]+`)

func newBroker(t *testing.T) broker {
	t.Helper()
	return broker{url: testenv.AMQPVhost(t), name: "feedkit-" + unsafeName.ReplaceAllString(t.Name(), "-")}
}

// config returns a transport config for the test's vhost with quick reconnects; errors
// go to the test log.
func (b broker) config(t *testing.T) rabbitmq.Config {
	return rabbitmq.Config{
		URL:             b.url,
		DeclareExchange: true,
		ConnectionName:  b.name,
		ReconnectDelay:  20 * time.Millisecond,
		OnError:         func(err error) { t.Logf("transport: %v", err) },
	}
}

func (b broker) transport(t *testing.T, cfg rabbitmq.Config) *rabbitmq.Transport {
	t.Helper()
	tr, err := rabbitmq.New(cfg)
	require.NoError(t, err)
	return tr
}

func (b broker) publisher(t *testing.T) *rabbitmq.Publisher {
	t.Helper()
	p, err := rabbitmq.NewPublisher(t.Context(), rabbitmq.Config{URL: b.url, DeclareExchange: true, ConnectionName: b.name + "-publisher"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// wholeWrites lets a publish under way finish when the simulator that makes it is
// stopped: a Publish cut short by its context leaves the connection mid-frame and fails
// the publisher for good, and the test's final Flush would report that, or not, depending
// on where in a write the stop fell.
type wholeWrites struct{ *rabbitmq.Publisher }

func (w wholeWrites) Publish(ctx context.Context, key string, body []byte) error {
	return w.Publisher.Publish(context.WithoutCancel(ctx), key, body)
}

// subscribeAll subscribes r to every message through tr, waits for ConnectionUp and
// closes the subscription when the test ends.
func subscribeAll(t *testing.T, tr *rabbitmq.Transport, r *feedtest.ReceiverRecorder) {
	t.Helper()
	sub, err := tr.Subscribe(t.Context(), []string{"#"}, r)
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Release() // a test that failed midway must not leave Close waiting on Receive
		require.NoError(t, sub.Close(context.Background()))
	})
	expectUp(t, r)
}

// expectUp fails t unless r's next call is ConnectionUp.
func expectUp(t *testing.T, r *feedtest.ReceiverRecorder) {
	t.Helper()
	c := r.RequireNext(t)
	require.Equal(t, feedtest.CallReceiverUp, c.Kind, "got %v", c)
}

// expectDown fails t unless r's next call is ConnectionDown, and returns its cause.
func expectDown(t *testing.T, r *feedtest.ReceiverRecorder) error {
	t.Helper()
	c := r.RequireNext(t)
	require.Equal(t, feedtest.CallReceiverDown, c.Kind, "got %v", c)
	require.Error(t, c.Err, "ConnectionDown without a cause")
	return c.Err
}

// expectReceive fails t unless r's next call is the Receive of a message with key.
func expectReceive(t *testing.T, r *feedtest.ReceiverRecorder, key string) feed.Delivery {
	t.Helper()
	c := r.RequireNext(t)
	require.Equal(t, feedtest.CallReceive, c.Kind, "got %v", c)
	require.Equal(t, key, c.Delivery.RoutingKey, "got %v", c)
	return c.Delivery
}

// openSession opens a session on tr and closes it when the test ends.
func openSession(t *testing.T, tr feed.Transport, cfg feed.SessionConfig) *feed.Session {
	t.Helper()
	s, err := feed.NewSession(tr, cfg)
	require.NoError(t, err)
	require.NoError(t, s.Open(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		require.NoError(t, s.Close(ctx))
	})
	return s
}

// betStop returns the body of a bet_stop for match id, and its routing key.
func betStop(id int64) (key string, body []byte) {
	return fmt.Sprintf("hi.-.live.bet_stop.1.sr:match.%d.-", id),
		[]byte(fmt.Sprintf(`<bet_stop event_id="sr:match:%d" product="1" timestamp="%d"/>`, id, id))
}

// waitCtx is a context for one wait of a test.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}
