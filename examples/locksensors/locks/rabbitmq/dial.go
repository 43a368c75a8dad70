package rabbitmq

import (
	"context"
	"errors"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/feedkit/feedkit/internal/amqpconn"
)

const (
	// dialTimeout bounds the TCP connect and the AMQP handshake together.
	dialTimeout = 15 * time.Second
	// closeTimeout bounds a graceful AMQP close; a broker that does not answer by then
	// has the socket closed under it. It also bounds the wait for amqp091-go's reader to
	// see the socket closed, after which a Run that returns has left almost nothing of
	// the connection running.
	closeTimeout = 5 * time.Second
)

// dial connects to the broker at rawURL, naming the connection connectionName for the
// broker's management tools. Until the result's Release, the end of ctx closes the
// socket under whatever is waiting (the TCP connect, a handshake, a declaration), so
// that a cancelled Run never waits out a dial timeout or a broker that stopped
// answering.
func dial(ctx context.Context, rawURL, connectionName string) (amqpconn.Dialed, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName(connectionName)
	return amqpconn.Dial(ctx, rawURL, amqp.Config{Properties: props}, dialTimeout)
}

// refusal reports whether err is the broker refusing what the configuration asks for:
// the credentials, the virtual host, the permissions, or a queue declaration that
// clashes with the queue as it exists. Retrying does not help until an operator acts.
func refusal(err error) bool {
	if errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrVhost) {
		return true
	}
	var ae *amqp.Error
	if !errors.As(err, &ae) || !ae.Server {
		return false
	}
	switch ae.Code {
	case amqp.AccessRefused, amqp.NotAllowed, amqp.PreconditionFailed:
		return true
	}
	return false
}
