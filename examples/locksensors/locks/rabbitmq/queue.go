package rabbitmq

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DeclareQueue declares the readings queue on ch: durable, a classic queue, no
// arguments. Consumer and Publisher both declare it with this, so whichever comes first
// creates it and the other's declaration matches; a queue that exists with other
// properties is refused by the broker (PRECONDITION_FAILED), which closes ch.
func DeclareQueue(ch *amqp.Channel, name string) error {
	// Durable, so readings survive a broker restart (with persistent messages); not
	// auto-deleted, so they wait while no consumer runs.
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		return fmt.Errorf("declare queue %q: %w", name, err)
	}
	return nil
}
