package group

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Kind says what a message in the group's queues carries.
type Kind string

// The kinds of message the ingress publishes.
const (
	// KindEvent is an event message of the feed (odds_change, bet_settlement, ...),
	// published to its event's shard queue (Topology.ShardOf).
	KindEvent Kind = "event"
	// KindBatch is several event messages of one shard in one AMQP message, in order:
	// the ingress packs the events that wait while the broker confirms earlier ones.
	KindBatch Kind = "batch"
	// KindSystem is an alive or a snapshot_complete, published to every shard queue.
	KindSystem Kind = "system"
	// KindBarrier marks, in every shard queue, the end of a producer's recovery: a
	// worker acknowledges it once everything before it in its queue is processed.
	KindBarrier Kind = "barrier"
	// KindBarrierAck is a worker's acknowledgement of a barrier, sent to the ingress.
	KindBarrierAck Kind = "barrier-ack"
	// KindGlobal is a global event for the application's GlobalEventsListener (a
	// producer's status, a recovery initiated, ...), published to the control exchange.
	KindGlobal Kind = "global"
)

// The headers of a message in the group's queues.
const (
	headerKind     = "fk-kind"
	headerKey      = "fk-key"      // the feed's routing key
	headerReceived = "fk-received" // the ingress's receipt time, Unix nanoseconds
	headerEvent    = "fk-event"    // the event's URN, which picks its shard
	headerCount    = "fk-count"    // how many events a batch holds
	headerEpoch    = "fk-epoch"    // the publishing ingress's lease generation
	headerSeq      = "fk-seq"      // the message's number in its epoch, from 1
	headerBarrier  = "fk-barrier"  // a barrier's id
	headerShard    = "fk-shard"    // the shard of a barrier's acknowledgement
	headerProducer = "fk-producer"
	headerRequest  = "fk-request"
)

// Envelope is one message of the group's queues, as the ingress publishes it and a
// worker reads it back. The feed message travels verbatim: its routing key, its body and
// the time the ingress received it.
type Envelope struct {
	Kind       Kind
	RoutingKey string    // the feed's routing key (events and system messages)
	Body       []byte    // the feed's body, verbatim; the global event's JSON
	ReceivedAt time.Time // when the ingress received it from the feed
	Event      string    // the event's URN, which picks its shard; empty for others
	// Epoch and Seq say which ingress published it, and in what order: the lease's
	// generation, and a number from 1 in that generation. A message published again
	// (after a broker's nack or reconnection, or replayed by a recovery after the
	// ingress failed over) is told apart by them.
	Epoch, Seq int64
	// Barrier, Producer and Request name a barrier and the recovery it ends; Shard is
	// the shard that acknowledges it.
	Barrier  string
	Producer int
	Request  int64
	Shard    int
	// ReplyTo is where a barrier's acknowledgements go (the AMQP reply-to property):
	// Topology.AcksQueue.
	ReplyTo string
}

// publishing makes the AMQP message of e: persistent, so that a durable queue keeps it
// across a broker restart.
func (e *Envelope) publishing() amqp.Publishing {
	h := amqp.Table{
		headerKind:  string(e.Kind),
		headerEpoch: e.Epoch,
		headerSeq:   e.Seq,
	}
	if e.RoutingKey != "" {
		h[headerKey] = e.RoutingKey
	}
	if !e.ReceivedAt.IsZero() {
		h[headerReceived] = e.ReceivedAt.UnixNano()
	}
	if e.Event != "" {
		h[headerEvent] = e.Event
	}
	if e.Barrier != "" {
		h[headerBarrier] = e.Barrier
		h[headerProducer] = int64(e.Producer)
		h[headerRequest] = e.Request
		h[headerShard] = int64(e.Shard)
	}
	return amqp.Publishing{Headers: h, DeliveryMode: amqp.Persistent, ReplyTo: e.ReplyTo, Body: e.Body}
}

// ErrNotGroupMessage is wrapped by the error of a message that the group's headers do
// not describe: a message some other publisher put in a shard queue.
var ErrNotGroupMessage = errors.New("group: not a message of the group")

// readEnvelope reads back what publishing wrote, but for ReplyTo, which the delivery
// carries as a property.
func readEnvelope(headers amqp.Table, body []byte) (Envelope, error) {
	kind, ok := headers[headerKind].(string)
	if !ok {
		return Envelope{}, fmt.Errorf("%w: no %s header", ErrNotGroupMessage, headerKind)
	}
	e := Envelope{Kind: Kind(kind), Body: body}
	e.RoutingKey, _ = headers[headerKey].(string)
	e.Event, _ = headers[headerEvent].(string)
	e.Barrier, _ = headers[headerBarrier].(string)
	var err error
	num := func(name string) int64 {
		v, present := headers[name]
		if !present || err != nil {
			return 0
		}
		n, ok := asInt64(v)
		if !ok {
			err = fmt.Errorf("%w: header %s is %T %v, not an integer", ErrNotGroupMessage, name, v, v)
		}
		return n
	}
	e.Epoch, e.Seq = num(headerEpoch), num(headerSeq)
	if ns := num(headerReceived); ns != 0 {
		e.ReceivedAt = time.Unix(0, ns).UTC()
	}
	e.Producer, e.Request, e.Shard = int(num(headerProducer)), num(headerRequest), int(num(headerShard))
	if err != nil {
		return Envelope{}, err
	}
	switch e.Kind {
	case KindEvent, KindSystem:
		if e.RoutingKey == "" || e.ReceivedAt.IsZero() {
			return Envelope{}, fmt.Errorf("%w: a %s message without %s or %s", ErrNotGroupMessage, e.Kind, headerKey, headerReceived)
		}
	case KindBatch:
	case KindBarrier, KindBarrierAck:
		if e.Barrier == "" {
			return Envelope{}, fmt.Errorf("%w: a %s without %s", ErrNotGroupMessage, e.Kind, headerBarrier)
		}
	case KindGlobal:
	default:
		return Envelope{}, fmt.Errorf("%w: unknown kind %q", ErrNotGroupMessage, kind)
	}
	return e, nil
}

// asInt64 reads an integer header as the AMQP library decodes it: the type depends on
// the encoding the publisher chose.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int16:
		return int64(n), true
	case int8:
		return int64(n), true
	case int:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}
