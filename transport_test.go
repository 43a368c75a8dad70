package feedkit_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit"
	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
	"github.com/feedkit/feedkit/recovery"
)

// errorSink is a Config.OnError that hands each error to the test in order.
type errorSink chan error

func (e errorSink) onError(err error) { e <- err }

// next waits for the next error; only a hang reaches the guard.
func (e errorSink) next(t *testing.T) error {
	t.Helper()
	select {
	case err := <-e:
		return err
	case <-time.After(time.Minute):
		t.Fatal("no error reported")
		return nil
	}
}

// syncBuffer is a log destination that the transport's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSDKUnreachableBrokerReportsEveryError: with a broker that cannot be reached, Open
// returns nil (ctx bounds the opening only) and the transport retries; every failed
// attempt reaches Config.OnError, once, whether the SDK built the transport from
// Config.AMQP or the host built it and passed it in Config.Transport, and the
// transport's logger; Stats().Transport counts them and keeps the last.
func TestSDKUnreachableBrokerReportsEveryError(t *testing.T) {
	const delay = time.Second // every backoff wait is within (delay/2, delay]
	amqp := rabbitmq.Config{URL: "amqp://guest:guest@127.0.0.1:1/", ReconnectDelay: delay, MaxReconnectDelay: delay}
	for _, c := range []struct {
		name string
		cfg  func(clk *clocktest.Fake, logger *slog.Logger) feedkit.Config
	}{
		{"built from Config.AMQP", func(clk *clocktest.Fake, logger *slog.Logger) feedkit.Config {
			ac := amqp
			return feedkit.Config{AMQP: &ac, Clock: clk, Logger: logger}
		}},
		{"built by the host", func(clk *clocktest.Fake, logger *slog.Logger) feedkit.Config {
			ac := amqp
			ac.Clock, ac.Logger = clk, logger
			tr, err := rabbitmq.New(ac)
			require.NoError(t, err)
			return feedkit.Config{Transport: tr, Clock: clk}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			clk := clocktest.NewFake(start)
			errs := make(errorSink, 16)
			var logs syncBuffer
			cfg := c.cfg(clk, slog.New(slog.NewTextHandler(&logs, nil)))
			// The manager's check runs on the same clock: an hour apart, it never comes
			// before a retry.
			cfg.Recovery, cfg.OnError = recovery.Config{Disabled: true, CheckInterval: time.Hour}, errs.onError
			sdk, err := feedkit.New(cfg)
			require.NoError(t, err)
			require.NoError(t, sdk.AddSession(feed.AllMessages, feedtest.NewRecorder()))
			t.Cleanup(func() { require.NoError(t, sdk.Close(context.Background())) })
			require.NoError(t, sdk.Open(t.Context()), "an unreachable broker does not fail Open: the transport retries")

			first := errs.next(t) // reported before Open returned
			const refused = "connect: dial tcp 127.0.0.1:1: connect: connection refused"
			assert.ErrorContains(t, first, `rabbitmq: connect to amqp://127.0.0.1:1 (vhost "/") (will retry): `+refused)
			assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN msg="), logs.String())
			assert.Contains(t, logs.String(), "(will retry): "+refused)
			st := sdk.Stats().Transport
			require.NotNil(t, st)
			assert.Equal(t, rabbitmq.Stats{FailedAttempts: 1, LastError: first.Error(), LastErrorAt: start}, *st)

			for attempt := 1; attempt <= 10; attempt++ {
				clk.BlockUntil(2) // the transport waits to retry, and the manager to check
				// To the retry's instant and no further: an Advance of a whole delay could
				// also fire the next retry, set after a jittered wait while it ran (a stress
				// run saw three attempts for two steps).
				retry, _ := clk.Next()
				clk.Set(retry)
				err := errs.next(t)
				assert.ErrorContains(t, err, fmt.Sprintf(`rabbitmq: reconnect to amqp://127.0.0.1:1 (vhost "/") (attempt %d): `+refused, attempt))
				assert.Equal(t, 1+attempt, strings.Count(logs.String(), "level=WARN msg="), logs.String())
				assert.Equal(t, 1, strings.Count(logs.String(), fmt.Sprintf("(attempt %d): %s", attempt, refused)), "logged once")
				st := *sdk.Stats().Transport
				assert.Equal(t, retry, st.LastErrorAt, "stamped when the attempt failed, at the retry's instant")
				st.LastErrorAt = time.Time{}
				assert.Equal(t, rabbitmq.Stats{FailedAttempts: uint64(1 + attempt), ReconnectAttempts: uint64(attempt),
					LastError: err.Error()}, st)
			}
			assert.Empty(t, errs, "one report to Config.OnError per attempt")
		})
	}
}

// nextConnectionCall returns the recorder's next connection change, passing over the
// producers' status reports, which this test leaves to others.
func nextConnectionCall(t *testing.T, global *feedtest.GlobalRecorder) string {
	t.Helper()
	for {
		c := global.RequireNext(t)
		if c.Kind == feedtest.CallConnectionUp || c.Kind == feedtest.CallConnectionDown {
			return c.String()
		}
	}
}

// TestSDKTransportStatsOnRabbitMQ counts the transport section exactly through a
// RabbitMQ run: the messages and their bytes, the link made at Open, the connection the
// broker closes, and the one reconnection attempt that restores it.
func TestSDKTransportStatsOnRabbitMQ(t *testing.T) {
	url := testenv.AMQPVhost(t)
	name := "feedkit-" + t.Name() + "-" + url[strings.LastIndex(url, "/")+1:] // the vhost's: unique to this run
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clk := clocktest.NewFake(start)
	const delay = time.Second
	errs := make(errorSink, 16)
	rec, global := feedtest.NewRecorder(), feedtest.NewGlobalRecorder()
	sdk, err := feedkit.New(feedkit.Config{
		AMQP: &rabbitmq.Config{URL: url, DeclareExchange: true, ConnectionName: name,
			ReconnectDelay: delay, MaxReconnectDelay: delay},
		Clock:    clk,
		Global:   global,
		Recovery: recovery.Config{Disabled: true, CheckInterval: time.Hour}, // no check before the reconnection
		OnError:  errs.onError,
	})
	require.NoError(t, err)
	require.NoError(t, sdk.AddSession(feed.AllMessages, rec))
	t.Cleanup(func() { require.NoError(t, sdk.Close(context.Background())) })
	require.NoError(t, sdk.Open(t.Context()))
	assert.Equal(t, "connection up on session 0 (all messages)", nextConnectionCall(t, global))
	assert.Equal(t, rabbitmq.Stats{Connected: 1, Connects: 1}, *sdk.Stats().Transport)

	pub, err := rabbitmq.NewPublisher(t.Context(), rabbitmq.Config{URL: url, DeclareExchange: true, ConnectionName: name + "-publisher"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	var sent, bytes uint64
	publish := func(from, to int64) {
		t.Helper()
		for id := from; id < to; id++ {
			key := fmt.Sprintf("hi.-.live.bet_stop.1.sr:match.%d.-", id)
			body := fmt.Appendf(nil, `<bet_stop event_id="sr:match:%d" product="1" timestamp="%d"/>`, id, id)
			require.NoError(t, pub.Publish(t.Context(), key, body))
			sent, bytes = sent+1, bytes+uint64(len(body))
		}
		require.NoError(t, pub.Flush(t.Context()))
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		require.NoError(t, rec.Wait(ctx, int(sent)))
	}
	publish(1, 11) // 10 messages, bodies of 63 to 65 bytes
	st := *sdk.Stats().Transport
	assert.Equal(t, rabbitmq.Stats{Connected: 1, Connects: 1, Delivered: 10, Bytes: bytes}, st)

	require.Equal(t, 1, testenv.CloseAMQPConnections(t, name, "feedkit test: broker closes the connection"))
	assert.Contains(t, nextConnectionCall(t, global), "connection down")
	lost := errs.next(t)
	assert.ErrorContains(t, lost, "lost the connection")
	clk.BlockUntil(2) // the transport waits to reconnect, and the manager to check
	st = *sdk.Stats().Transport
	assert.Equal(t, rabbitmq.Stats{Connects: 1, ConnectionDrops: 1, Delivered: 10, Bytes: bytes,
		LastError: lost.Error(), LastErrorAt: start}, st)

	clk.Advance(delay)
	assert.Equal(t, "connection up on session 0 (all messages)", nextConnectionCall(t, global))
	publish(11, 16)
	st = *sdk.Stats().Transport
	assert.Equal(t, rabbitmq.Stats{Connected: 1, Connects: 2, ReconnectAttempts: 1, ConnectionDrops: 1,
		Delivered: 15, Bytes: bytes, LastError: lost.Error(), LastErrorAt: start}, st)
	assert.Empty(t, errs, "the lost connection is the one error")
}
