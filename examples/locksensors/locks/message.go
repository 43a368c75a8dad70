package locks

import (
	"context"
	"time"
)

// Message is one reading message as a queue delivered it.
type Message struct {
	Body     []byte
	Received time.Time
}

// BatchHandler stores batches of reading messages; Ingester is the one the service uses.
// A queue consumer hands it the messages it received, in order, and acknowledges them
// once HandleBatch returns nil: every message is then stored, or refused into the dead
// letters. An error means nothing was stored and the batch should be handed again
// later (or left for the broker to redeliver). HandleBatch may be called by several
// consumers at once, and a message may come twice (a redelivery): storing it again must
// do no harm.
type BatchHandler interface {
	HandleBatch(ctx context.Context, msgs []Message) error
}

// BatchHandlerFunc adapts a function to BatchHandler.
type BatchHandlerFunc func(ctx context.Context, msgs []Message) error

// HandleBatch calls f.
func (f BatchHandlerFunc) HandleBatch(ctx context.Context, msgs []Message) error { return f(ctx, msgs) }
