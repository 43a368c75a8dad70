package group

import (
	"fmt"
	"hash/fnv"
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
	// Prefix starts every name: "<prefix>.shard.<n>", "<prefix>.control",
	// "<prefix>.acks". Empty means DefaultPrefix. Letters, digits, '.', '-' and '_'.
	Prefix string
	// Shards is K, the number of shard queues the events are hashed over (ShardOf),
	// from 1 to MaxShards. Changing it for a group that has messages queued breaks
	// their order: drain the queues first.
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

// ShardOf returns the shard of an event, by its URN ("sr:match:1234"): a jump
// consistent hash (Lamping and Veach) of the URN's FNV-1a hash. An event stays on one
// shard while Shards stays the same; when Shards grows from K to K+1, only about one
// event in K+1 moves.
func (t Topology) ShardOf(event string) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(event))
	return jumpHash(h.Sum64(), max(t.Shards, 1))
}

// jumpHash maps key to one of n buckets such that growing n moves the fewest keys.
func jumpHash(key uint64, n int) int {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// ShardQueue is the name of shard n's queue.
func (t Topology) ShardQueue(n int) string { return t.Prefix + ".shard." + strconv.Itoa(n) }

// ControlExchange is the fanout exchange of the global events the workers pass to the
// application.
func (t Topology) ControlExchange() string { return t.Prefix + ".control" }

// AcksQueue is the queue of the workers' acknowledgements of barriers, which the active
// ingress consumes (a single active consumer: a standby ingress waits its turn).
func (t Topology) AcksQueue() string { return t.Prefix + ".acks" }

// declare declares the topology on ch: every process declares it alike, whichever
// starts first.
func (t Topology) declare(ch *amqp.Channel) error {
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
	}
	return nil
}
