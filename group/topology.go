package group

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultPrefix names the group's exchanges and queues when Topology.Prefix is empty.
const DefaultPrefix = "feedkit"

// MaxShards bounds Topology.Shards: beyond it a barrier costs more than it is worth.
const MaxShards = 256

// Topology names the group's exchanges and queues in the operator's RabbitMQ. Every
// process of a group must be given the same one.
type Topology struct {
	// Prefix starts every name: "<prefix>.events", "<prefix>.shard.<n>",
	// "<prefix>.control", "<prefix>.acks". Empty means DefaultPrefix. Letters, digits, '.', '-' and '_'.
	Prefix string
	// Shards is K, the number of shard queues the events are hashed over, from 1 to
	// MaxShards. Changing it for a group that has messages queued breaks their order:
	// drain the queues first.
	Shards int
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// withDefaults returns t with its defaults, or an error naming the field that is wrong.
func (t Topology) withDefaults() (Topology, error) {
	if t.Prefix == "" {
		t.Prefix = DefaultPrefix
	}
	switch {
	case !prefixPattern.MatchString(t.Prefix):
		return t, fmt.Errorf("group: Topology.Prefix %q: use 1 to 100 letters, digits, '.', '-' or '_'", t.Prefix)
	case t.Shards < 1 || t.Shards > MaxShards:
		return t, fmt.Errorf("group: Topology.Shards %d must be from 1 to %d", t.Shards, MaxShards)
	}
	return t, nil
}

// EventsExchange is the consistent-hash exchange the ingress publishes events to.
func (t Topology) EventsExchange() string { return t.Prefix + ".events" }

// ShardQueue is the name of shard n's queue.
func (t Topology) ShardQueue(n int) string { return t.Prefix + ".shard." + strconv.Itoa(n) }

// ControlExchange is the fanout exchange of the global events the workers pass to the
// application.
func (t Topology) ControlExchange() string { return t.Prefix + ".control" }

// AcksQueue is the queue of the workers' acknowledgements of barriers, which the active
// ingress consumes (a single active consumer: a standby ingress waits its turn).
func (t Topology) AcksQueue() string { return t.Prefix + ".acks" }

// ErrNoConsistentHash is wrapped by declare's error when the broker lacks the
// consistent-hash exchange: its plugin is not enabled.
var ErrNoConsistentHash = errors.New("group: the broker has no x-consistent-hash exchange type: enable it with `rabbitmq-plugins enable rabbitmq_consistent_hash_exchange`")

// declare declares the topology on ch: every process declares it alike, whichever
// starts first. A broker without the consistent-hash plugin closes the channel.
func (t Topology) declare(ch *amqp.Channel) error {
	err := ch.ExchangeDeclare(t.EventsExchange(), "x-consistent-hash", true, false, false, false,
		amqp.Table{"hash-header": headerEvent})
	if err != nil {
		var aerr *amqp.Error
		if errors.As(err, &aerr) && aerr.Code == amqp.CommandInvalid {
			return fmt.Errorf("%w (%v)", ErrNoConsistentHash, err)
		}
		return fmt.Errorf("group: declaring %s: %w", t.EventsExchange(), err)
	}
	if err := ch.ExchangeDeclare(t.ControlExchange(), amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		return fmt.Errorf("group: declaring %s: %w", t.ControlExchange(), err)
	}
	if _, err := ch.QueueDeclare(t.AcksQueue(), true, false, false, false, amqp.Table{"x-single-active-consumer": true}); err != nil {
		return fmt.Errorf("group: declaring %s: %w", t.AcksQueue(), err)
	}
	for n := range t.Shards {
		q := t.ShardQueue(n)
		if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-single-active-consumer": true}); err != nil {
			return fmt.Errorf("group: declaring %s: %w", q, err)
		}
		// The binding key is the queue's weight in the hash ring: all equal.
		if err := ch.QueueBind(q, "1", t.EventsExchange(), false, nil); err != nil {
			return fmt.Errorf("group: binding %s: %w", q, err)
		}
	}
	return nil
}
