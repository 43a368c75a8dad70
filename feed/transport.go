package feed

import (
	"context"
	"time"
)

// Delivery is one message as a transport read it from the broker. Body is handed over
// for good: the transport neither modifies nor reuses it after Receive, so the session
// decodes it in place instead of copying it.
type Delivery struct {
	RoutingKey string
	Body       []byte
	ReceivedAt time.Time
}

// Receiver takes what a transport reads. A transport calls its methods from one goroutine
// at a time, in order. Receive may block to slow the transport down (back-pressure); the
// transport then stops reading, and the broker holds the messages.
type Receiver interface {
	// Receive takes one message.
	Receive(d Delivery)
	// ConnectionDown reports the loss of the connection, with its cause.
	ConnectionDown(err error)
	// ConnectionUp reports that the queue is bound and consuming again (or for the first
	// time, when the broker was unreachable at Subscribe).
	ConnectionUp()
	// Error reports an error the transport met and goes on from: a failed connection
	// attempt, a lost connection, a failed acknowledgement. The session passes it to its
	// OnError, so that a transport the host built reports to the SDK like one it built
	// itself. ConnectionDown and ConnectionUp still tell the connection's state.
	Error(err error)
}

// Transport connects sessions to a message broker: the embedded broker of package
// feedtest, or RabbitMQ.
type Transport interface {
	// Subscribe creates a queue for one session, bound to the exchange with bindings (topic
	// patterns: '*' matches one word, '#' zero or more), and hands every message routed to
	// it to r until the subscription is closed. ConnectionUp is reported once the queue is
	// consuming.
	Subscribe(ctx context.Context, bindings []string, r Receiver) (Subscription, error)
}

// Subscription is a session's consumption from a transport.
type Subscription interface {
	// Close stops the consumption and deletes the queue. It returns once the transport
	// will call the Receiver no more, or when ctx ends.
	Close(ctx context.Context) error
}
