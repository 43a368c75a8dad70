package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A batch's body is a version byte, then each event in order: its routing key, receipt
// time, epoch, seq, event URN and body, lengths and numbers as varints. The envelopes'
// bodies are read back as slices of the delivery's body, without a copy.
const batchVersion = 1

// Bounds of one batch: a burst of small messages makes few AMQP messages, a large body
// goes alone.
const (
	batchMaxEvents = 256
	batchMaxBytes  = 1 << 20
)

// batchSize is what e adds to a batch's body, bounds of its varints included.
func batchSize(e *Envelope) int {
	return 5*binary.MaxVarintLen64 + len(e.RoutingKey) + len(e.Event) + len(e.Body)
}

// batchPublishing makes the AMQP message of events, all of one shard, in order:
// persistent, with the first event's epoch and seq in its headers (for the broker's
// returns) and the count.
func batchPublishing(events []*Envelope) amqp.Publishing {
	n := 1
	for _, e := range events {
		n += batchSize(e)
	}
	body := make([]byte, 1, n)
	body[0] = batchVersion
	for _, e := range events {
		body = binary.AppendUvarint(body, uint64(len(e.RoutingKey)))
		body = append(body, e.RoutingKey...)
		body = binary.AppendVarint(body, e.ReceivedAt.UnixNano())
		body = binary.AppendVarint(body, e.Epoch)
		body = binary.AppendVarint(body, e.Seq)
		body = binary.AppendUvarint(body, uint64(len(e.Event)))
		body = append(body, e.Event...)
		body = binary.AppendUvarint(body, uint64(len(e.Body)))
		body = append(body, e.Body...)
	}
	first := events[0]
	return amqp.Publishing{
		Headers: amqp.Table{
			headerKind:  string(KindBatch),
			headerEpoch: first.Epoch,
			headerSeq:   first.Seq,
			headerCount: int64(len(events)),
		},
		DeliveryMode: amqp.Persistent,
		Body:         body,
	}
}

var errBatchShort = errors.New("ends inside an event")

// readBatch reads back the events of a batch's body; want is its count header. Each is a
// KindEvent envelope whose Body points into body.
func readBatch(body []byte, want int64) ([]Envelope, error) {
	if len(body) == 0 || body[0] != batchVersion {
		return nil, fmt.Errorf("%w: a batch of an unknown version", ErrNotGroupMessage)
	}
	if want < 1 || want > batchMaxEvents {
		return nil, fmt.Errorf("%w: a batch of %d events", ErrNotGroupMessage, want)
	}
	r := batchReader{b: body[1:]}
	out := make([]Envelope, 0, want)
	for len(r.b) > 0 && r.err == nil {
		e := Envelope{Kind: KindEvent}
		e.RoutingKey = string(r.bytes())
		e.ReceivedAt = time.Unix(0, r.varint()).UTC()
		e.Epoch, e.Seq = r.varint(), r.varint()
		e.Event = string(r.bytes())
		e.Body = r.bytes()
		if r.err == nil && e.RoutingKey == "" {
			r.err = errors.New("an event without a routing key")
		}
		if r.err == nil {
			out = append(out, e)
		}
	}
	switch {
	case r.err != nil:
		return nil, fmt.Errorf("%w: batch event %d: %v", ErrNotGroupMessage, len(out), r.err)
	case int64(len(out)) != want:
		return nil, fmt.Errorf("%w: a batch of %d events, its header says %d", ErrNotGroupMessage, len(out), want)
	}
	return out, nil
}

// batchReader reads varints and length-prefixed fields, keeping the first error.
type batchReader struct {
	b   []byte
	err error
}

func (r *batchReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errBatchShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *batchReader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	l, n := binary.Uvarint(r.b)
	if n <= 0 || l > uint64(len(r.b)-n) {
		r.err = errBatchShort
		return nil
	}
	v := r.b[n : n+int(l)]
	r.b = r.b[n+int(l):]
	return v
}
