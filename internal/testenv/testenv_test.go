package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smokeTimeout bounds each smoke test's talk with a service; a healthy
// loopback service answers in milliseconds.
const smokeTimeout = 30 * time.Second

// fakeTB records Skipf and Fatalf instead of acting on the real test. Like
// the real ones they end the calling goroutine, so code after them does not
// run; call the code under test through (*fakeTB).run.
type fakeTB struct {
	testing.TB
	skipped bool
	failed  bool
	msg     string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = true
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn in its own goroutine, so that Skipf and Fatalf end only that
// goroutine, and reports whether fn returned normally.
func (f *fakeTB) run(fn func()) (returned bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
		returned = true
	}()
	<-done
	return returned
}

func lookupFrom(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		ci        bool
		wantValue string
		want      verdict
	}{
		{"set", map[string]string{PGURLVar: "postgres://x"}, false, "postgres://x", use},
		{"set under CI", map[string]string{PGURLVar: "postgres://x"}, true, "postgres://x", use},
		{"unset", map[string]string{}, false, "", skip},
		{"unset under CI", map[string]string{}, true, "", fail},
		{"empty", map[string]string{PGURLVar: ""}, false, "", skip},
		{"blank under CI", map[string]string{PGURLVar: "  \t"}, true, "", fail},
		{"other variable set", map[string]string{AMQPURLVar: "amqp://x"}, false, "", skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value, v, msg := decide(PGURLVar, lookupFrom(tt.env), tt.ci)
			assert.Equal(t, tt.wantValue, value)
			assert.Equal(t, tt.want, v)
			switch v {
			case use:
				assert.Empty(t, msg)
			case fail:
				assert.Equal(t, "FEEDKIT_PG_URL is not set; under CI=true an integration test may not skip: run ./scripts/test.sh", msg)
			case skip:
				assert.Contains(t, msg, PGURLVar)
				assert.Contains(t, msg, "./scripts/test.sh")
			}
		})
	}
}

func TestIsCI(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "": false, "1": false, "false": false, "TRUE": false} {
		assert.Equal(t, want, isCI(lookupFrom(map[string]string{CIVar: value})), "CI=%q", value)
	}
	assert.False(t, isCI(lookupFrom(nil)), "CI unset")
}

func TestFromLookupActsOnVerdict(t *testing.T) {
	t.Run("set returns the value", func(t *testing.T) {
		f := &fakeTB{TB: t}
		var got string
		returned := f.run(func() {
			got = fromLookup(f, AMQPURLVar, lookupFrom(map[string]string{AMQPURLVar: "amqp://h/", CIVar: "true"}))
		})
		assert.True(t, returned)
		assert.False(t, f.skipped)
		assert.False(t, f.failed)
		assert.Equal(t, "amqp://h/", got)
	})
	t.Run("unset skips outside CI", func(t *testing.T) {
		f := &fakeTB{TB: t}
		returned := f.run(func() { fromLookup(f, AMQPURLVar, lookupFrom(nil)) })
		assert.False(t, returned, "the test must stop at Skipf")
		assert.True(t, f.skipped)
		assert.False(t, f.failed)
		assert.Contains(t, f.msg, AMQPURLVar)
	})
	t.Run("unset fails under CI", func(t *testing.T) {
		f := &fakeTB{TB: t}
		returned := f.run(func() { fromLookup(f, AMQPURLVar, lookupFrom(map[string]string{CIVar: "true"})) })
		assert.False(t, returned, "the test must stop at Fatalf")
		assert.False(t, f.skipped)
		assert.True(t, f.failed)
		assert.Equal(t, "FEEDKIT_AMQP_URL is not set; under CI=true an integration test may not skip: run ./scripts/test.sh", f.msg)
	})
}

// TestExportedFunctionsReadTheirVariable checks the wiring of the exported
// functions to the real environment. It changes the process environment, so
// it must not run in parallel with the smoke tests.
func TestExportedFunctionsReadTheirVariable(t *testing.T) {
	for name, fn := range map[string]func(testing.TB) string{AMQPURLVar: AMQPURL, PGURLVar: PGURL} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "scheme://value-of-"+name)
			f := &fakeTB{TB: t}
			var got string
			require.True(t, f.run(func() { got = fn(f) }))
			assert.Equal(t, "scheme://value-of-"+name, got)

			t.Setenv(name, "")
			t.Setenv(CIVar, "true")
			f = &fakeTB{TB: t}
			require.False(t, f.run(func() { fn(f) }))
			assert.True(t, f.failed)
			assert.Contains(t, f.msg, name)

			t.Setenv(CIVar, "")
			f = &fakeTB{TB: t}
			require.False(t, f.run(func() { fn(f) }))
			assert.True(t, f.skipped)
		})
	}
}

// writeScript writes an executable shell script to a temporary directory and
// returns its path.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fakectl")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}

func TestRabbitMQCtlRunsTheCommandLine(t *testing.T) {
	script := writeScript(t, `echo "args: $*"`)
	// The variable is a command line: words after the program come first.
	t.Setenv(RabbitMQCtlVar, script+" -n feedkit@localhost")
	f := &fakeTB{TB: t}
	var out string
	require.True(t, f.run(func() { out = RabbitMQCtl(f, "close_all_connections", "test") }))
	assert.False(t, f.failed)
	assert.Equal(t, "args: -n feedkit@localhost close_all_connections test\n", out)
}

func TestRabbitMQCtlWorksInCleanup(t *testing.T) {
	t.Setenv(RabbitMQCtlVar, writeScript(t, `echo "args: $*"`))
	var out string
	t.Run("stops the broker", func(t *testing.T) {
		t.Cleanup(func() { out = RabbitMQCtl(t, "start_app") })
	})
	assert.Equal(t, "args: start_app\n", out)
}

func TestRabbitMQCtlFailsWithOutput(t *testing.T) {
	t.Setenv(RabbitMQCtlVar, writeScript(t, `echo "node down: $*" >&2; exit 3`))
	f := &fakeTB{TB: t}
	require.False(t, f.run(func() { RabbitMQCtl(f, "stop_app") }))
	assert.True(t, f.failed)
	assert.Contains(t, f.msg, "node down: stop_app", "the failure must show the command's output")
	assert.Contains(t, f.msg, "exit status 3")
}

func TestRabbitMQCtlUnsetSkipsOrFails(t *testing.T) {
	t.Setenv(RabbitMQCtlVar, "")
	t.Setenv(CIVar, "")
	f := &fakeTB{TB: t}
	require.False(t, f.run(func() { RabbitMQCtl(f, "status") }))
	assert.True(t, f.skipped)
	assert.Contains(t, f.msg, RabbitMQCtlVar)

	t.Setenv(CIVar, "true")
	f = &fakeTB{TB: t}
	require.False(t, f.run(func() { RabbitMQCtl(f, "status") }))
	assert.True(t, f.failed)
	assert.Contains(t, f.msg, RabbitMQCtlVar)
}

// The smoke tests below prove that the services scripts/test.sh starts
// really work, so that a failing integration test elsewhere points at that
// test and not at the environment.

// openChannel dials the test broker and opens a channel on it, closing both
// when the test ends.
func openChannel(t *testing.T) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(AMQPURL(t))
	require.NoError(t, err, "dial the test broker")
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err, "open a channel")
	return ch
}

func TestSmokeAMQPRoundTrip(t *testing.T) {
	ch := openChannel(t)
	ctx, cancel := context.WithTimeout(t.Context(), smokeTimeout)
	defer cancel()

	// A server-named, exclusive, auto-delete queue leaves nothing behind.
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	require.NoError(t, err)
	require.NotEmpty(t, q.Name, "the broker names the queue")

	deliveries, err := ch.ConsumeWithContext(ctx, q.Name, "", true, true, false, false, nil)
	require.NoError(t, err)

	// Confirms make the broker say it has the message, so a lost publish
	// shows up here and not as a time-out below.
	require.NoError(t, ch.Confirm(false))
	body := []byte("feedkit smoke test " + time.Now().UTC().Format(time.RFC3339Nano))
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q.Name, true, false, amqp.Publishing{
		ContentType: "text/plain",
		MessageId:   t.Name(),
		Body:        body,
	})
	require.NoError(t, err)
	acked, err := confirm.WaitContext(ctx)
	require.NoError(t, err)
	require.True(t, acked, "the broker must ack the publish")

	select {
	case d, ok := <-deliveries:
		require.True(t, ok, "delivery channel closed before a message came")
		assert.Equal(t, body, d.Body)
		assert.Equal(t, t.Name(), d.MessageId)
		assert.Equal(t, q.Name, d.RoutingKey)
	case <-ctx.Done():
		t.Fatalf("no delivery from queue %s within %v", q.Name, smokeTimeout)
	}
}

func TestSmokePostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), smokeTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, PGURL(t))
	require.NoError(t, err, "connect to the test database")
	t.Cleanup(func() { _ = conn.Close(context.Background()) })

	var one int
	require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	assert.Equal(t, 1, one)
}

// TestSmokeRabbitMQCtlControlsTheTestBroker checks that FEEDKIT_RABBITMQCTL
// reaches the very broker that FEEDKIT_AMQP_URL points at: a queue declared
// over AMQP must show up in its list_queues.
func TestSmokeRabbitMQCtlControlsTheTestBroker(t *testing.T) {
	RabbitMQCtl(t, "status")

	ch := openChannel(t)
	q, err := ch.QueueDeclare("feedkit-smoke-"+fmt.Sprint(time.Now().UnixNano()), false, true, true, false, nil)
	require.NoError(t, err)

	out := RabbitMQCtl(t, "list_queues", "name")
	found := false
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == q.Name {
			found = true
		}
	}
	assert.True(t, found, "queue %s missing from list_queues output:\n%s", q.Name, out)
}
