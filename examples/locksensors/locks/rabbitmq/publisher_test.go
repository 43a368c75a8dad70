package rabbitmq_test

import (
	"context"
	"errors"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks/rabbitmq"
	"github.com/feedkit/feedkit/internal/testenv"
)

func TestPublisherPublishesPersistentJSONToADurableQueue(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	p, err := rabbitmq.NewPublisher(waitCtx(t), u, "")
	require.NoError(t, err)
	require.NoError(t, p.Publish(waitCtx(t), []byte(`{"n":0}`)))
	require.NoError(t, p.PublishBatch(waitCtx(t), bodies(1, 99)))
	require.NoError(t, p.PublishBatch(waitCtx(t), nil))

	conn, err := amqp.Dial(u)
	require.NoError(t, err)
	defer conn.Close()
	ch, err := conn.Channel()
	require.NoError(t, err)
	d, ok, err := ch.Get(rabbitmq.DefaultQueue, true)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, `{"n":0}`, string(d.Body))
	assert.Equal(t, "application/json", d.ContentType)
	assert.Equal(t, amqp.Persistent, d.DeliveryMode)
	assert.Equal(t, 99, depth(t, u, rabbitmq.DefaultQueue), "a confirmed batch is in the queue")

	// The declaration both sides share is durable: a transient one clashes with it.
	_, err = ch.QueueDeclare(rabbitmq.DefaultQueue, false, false, false, false, nil)
	var ae *amqp.Error
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, amqp.PreconditionFailed, ae.Code)

	require.NoError(t, p.Close())
	assert.Error(t, p.Publish(waitCtx(t), []byte("late")), "no Publish after Close")
	assert.NoError(t, p.Close(), "closing twice")
}

func TestPublisherOutlivesAContextThatEndedBeforeAWrite(t *testing.T) {
	t.Parallel()
	u := testenv.AMQPVhost(t)
	p, err := rabbitmq.NewPublisher(waitCtx(t), u, "q")
	require.NoError(t, err)
	defer p.Close()
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, p.Publish(ended, []byte("{}")), context.Canceled)
	require.NoError(t, p.Publish(waitCtx(t), []byte("{}")), "nothing was half written")
	assert.Equal(t, 1, depth(t, u, "q"))
}

func TestNewPublisherRefusesABadURL(t *testing.T) {
	_, err := rabbitmq.NewPublisher(t.Context(), "http://localhost/", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "URL")
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = rabbitmq.NewPublisher(ended, "amqp://localhost:1/", "")
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}
