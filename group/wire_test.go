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
