package amqpconn

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/testenv"
)

// These tests dial the test broker (FEEDKIT_AMQP_URL); they skip without one.

func namedConfig(name string) amqp.Config {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(name)
	return amqp.Config{Properties: props}
}

func TestDialOpensAConnectionThatOutlivesItsContextOnceReleased(t *testing.T) {
	u := testenv.AMQPURL(t)
	ctx, cancel := context.WithCancel(t.Context())
	d, err := Dial(ctx, u, namedConfig("feedkit-amqpconn-test"), waitTimeout)
	require.NoError(t, err)
	defer d.Conn.Close()
	require.NotNil(t, d.Sock)
	require.NoError(t, d.Release(time.Second))

	cancel()
	ch, err := d.Conn.Channel()
	require.NoError(t, err, "a released connection is the caller's, whatever becomes of ctx")
	_, err = ch.QueueDeclare("", false, true, true, false, nil)
	require.NoError(t, err)
	assert.False(t, d.Conn.IsClosed())
	assert.NoError(t, d.Sock.firstReadErr())
}

func TestReleaseAfterTheContextEndedClosesTheConnection(t *testing.T) {
	u := testenv.AMQPURL(t)
	ctx, cancel := context.WithCancel(t.Context())
	d, err := Dial(ctx, u, namedConfig("feedkit-amqpconn-test"), waitTimeout)
	require.NoError(t, err)
	defer d.Conn.Close()

	// The setup the guard covers: it fails once ctx closes the socket under it. The
	// timeout is an hour, so that returning within waitTimeout proves Release did not
	// wait it out, however slow the machine.
	cancel()
	start := time.Now()
	assert.Same(t, context.Canceled, d.Release(time.Hour))
	assert.Less(t, time.Since(start), waitTimeout, "Release waited out its timeout: the reader never saw the close")
	assert.True(t, d.Conn.IsClosed())
	assert.Error(t, d.Sock.firstReadErr(), "amqp091-go's reader saw the socket closed")
}

func TestDialRefusesWrongCredentials(t *testing.T) {
	base, err := url.Parse(testenv.AMQPURL(t))
	require.NoError(t, err)
	base.User = url.UserPassword("nobody", "wrong")
	_, err = Dial(t.Context(), base.String(), namedConfig("feedkit-amqpconn-test"), waitTimeout)
	require.Error(t, err)
	var ae *amqp.Error
	refused := errors.Is(err, amqp.ErrCredentials) || errors.As(err, &ae) && ae.Code == amqp.AccessRefused
	assert.True(t, refused, "a refusal, not a network failure: %v", err)
	assert.NotErrorIs(t, err, ErrHandshake)
}
