package group

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	for _, e := range []Envelope{
		{Kind: KindEvent, RoutingKey: "hi.-.live.odds_change.1.sr:match:1.-", Body: []byte("<odds_change/>"), ReceivedAt: at, Event: "sr:match:1", Epoch: 3, Seq: 7},
		{Kind: KindSystem, RoutingKey: "-.-.-.alive.-.-.-.-", Body: []byte("<alive/>"), ReceivedAt: at, Epoch: 3, Seq: 8},
		{Kind: KindBarrier, Barrier: "3-1-42", Producer: 1, Request: 42, Epoch: 3, Seq: 9, ReplyTo: "feedkit.acks"},
		{Kind: KindBarrierAck, Barrier: "3-1-42", Producer: 1, Request: 42, Shard: 2, Epoch: 3},
		{Kind: KindGlobal, Body: []byte(`{}`), Epoch: 3, Seq: 10},
	} {
		p := e.publishing()
		assert.Equal(t, amqp.Persistent, p.DeliveryMode)
		got, err := readEnvelope(p.Headers, p.Body)
		require.NoError(t, err)
		got.ReplyTo = p.ReplyTo
		assert.Equal(t, e, got)
	}
}

func TestReadEnvelopeRefusesForeignMessages(t *testing.T) {
	for _, c := range []struct {
		h    amqp.Table
		want string
	}{
		{amqp.Table{}, "no fk-kind header"},
		{amqp.Table{headerKind: "event"}, "without fk-key or fk-received"},
		{amqp.Table{headerKind: "barrier"}, "without fk-barrier"},
		{amqp.Table{headerKind: "what"}, `unknown kind "what"`},
		{amqp.Table{headerKind: "event", headerSeq: 1.5}, "header fk-seq is float64"},
	} {
		_, err := readEnvelope(c.h, nil)
		assert.ErrorIs(t, err, ErrNotGroupMessage)
		assert.ErrorContains(t, err, c.want)
	}
}

// A batch reads back as the events it was made of, in order; a damaged one is refused.
func TestBatchRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	var events []*Envelope
	for i := range 3 {
		events = append(events, &Envelope{Kind: KindEvent, RoutingKey: "hi.-.live.odds_change.1.sr:match:1.-",
			Body: []byte("<odds_change/>")[:10+i], ReceivedAt: at.Add(time.Duration(i)), Event: "sr:match:1", Epoch: 3, Seq: int64(7 + i)})
	}
	events[1].Body = nil
	p := batchPublishing(events)
	assert.Equal(t, amqp.Persistent, p.DeliveryMode)
	head, err := readEnvelope(p.Headers, p.Body)
	require.NoError(t, err)
	assert.Equal(t, KindBatch, head.Kind)
	assert.Equal(t, int64(7), head.Seq, "the first event's seq, for the broker's returns")
	got, err := readBatch(p.Body, 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, e := range events {
		want := *e
		if want.Body == nil {
			want.Body = []byte{}
		}
		assert.Equal(t, want, got[i], "event %d", i)
	}

	for _, c := range []struct {
		body  []byte
		count int64
		want  string
	}{
		{p.Body, 2, "a batch of 3 events, its header says 2"},
		{p.Body, 0, "a batch of 0 events"},
		{p.Body[:len(p.Body)-1], 3, "batch event 2: ends inside an event"},
		{append([]byte{9}, p.Body[1:]...), 3, "unknown version"},
		{nil, 3, "unknown version"},
	} {
		_, err := readBatch(c.body, c.count)
		assert.ErrorIs(t, err, ErrNotGroupMessage)
		assert.ErrorContains(t, err, c.want)
	}
}
