package group

import (
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/testenv"
)

func TestTopologyRefusesBadFieldsByName(t *testing.T) {
	for _, c := range []struct {
		t    Topology
		want string
	}{
		{Topology{Shards: 0}, "Topology.Shards 0 must be from 1 to 256"},
		{Topology{Shards: 257}, "Topology.Shards 257"},
		{Topology{Prefix: "a b", Shards: 1}, `Topology.Prefix "a b"`},
	} {
		_, err := c.t.withDefaults()
		assert.ErrorContains(t, err, c.want)
	}
	got, err := Topology{Shards: 4}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, "feedkit.events", got.EventsExchange())
	assert.Equal(t, "feedkit.shard.3", got.ShardQueue(3))
	assert.Equal(t, "feedkit.control", got.ControlExchange())
}

// On a real broker the topology declares twice alike (every process declares it), and
// the consistent-hash exchange keeps each event on one shard queue.
func TestTopologyHashesEachEventToOneShard(t *testing.T) {
	url := testenv.AMQPVhost(t)
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	top := Topology{Prefix: "t", Shards: 4}
	require.NoError(t, top.declare(ch))
	require.NoError(t, top.declare(ch), "a second process declares the same")

	const events, each = 40, 5
	for i := range events * each {
		e := Envelope{Kind: KindEvent, RoutingKey: "hi.-.live.odds_change.1.sr:match:1.-", ReceivedAt: time.Unix(1, 0),
			Event: "sr:match:" + strconv.Itoa(i%events), Epoch: 1, Seq: int64(i + 1)}
		require.NoError(t, ch.PublishWithContext(t.Context(), top.EventsExchange(), "", true, false, e.publishing()))
	}
	shardOf := map[string]int{}
	total := 0
	for n := range top.Shards {
		for {
			d, ok, err := ch.Get(top.ShardQueue(n), true)
			require.NoError(t, err)
			if !ok {
				break
			}
			env, err := readEnvelope(d.Headers, d.Body)
			require.NoError(t, err)
			if s, seen := shardOf[env.Event]; seen {
				assert.Equal(t, s, n, "%s in two shards", env.Event)
			}
			shardOf[env.Event] = n
			total++
		}
	}
	assert.Equal(t, events*each, total, "every message in exactly one shard queue")
	assert.Len(t, shardOf, events)
}
