package rabbitmq

import (
	"context"
	"fmt"

	"github.com/feedkit/feedkit/internal/amqpconn"
)

// dial connects to the broker of s, within DialTimeout. Until the result's Release, the
// end of ctx closes the socket under whatever step is waiting (the TCP connect, a
// handshake, a declaration), so that Close never waits out a dial timeout or a broker
// that stopped answering.
func (s *settings) dial(ctx context.Context) (amqpconn.Dialed, error) {
	d, err := amqpconn.Dial(ctx, s.URL, s.amqpConfig(), s.DialTimeout)
	// amqpconn.Dial returns ctx's own error once ctx has ended; callers compare it, so
	// it stays unwrapped.
	if err != nil && err != ctx.Err() {
		err = fmt.Errorf("connect: %w", err)
	}
	return d, err
}
