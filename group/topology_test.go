package group

import (
	"strconv"
	"testing"

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
	assert.Equal(t, "feedkit.shard.3", got.ShardQueue(3))
	assert.Equal(t, "feedkit.control", got.ControlExchange())
}

// Each event has one shard, the same in every process; the events spread evenly; and
// growing the group by a shard moves only the events the new shard takes.
func TestShardOfSpreadsEventsAndMovesFewOnGrowth(t *testing.T) {
	const events = 10000
	four, five := Topology{Shards: 4}, Topology{Shards: 5}
	count := make([]int, 4)
	moved := 0
	for i := range events {
		ev := "sr:match:" + strconv.Itoa(i)
		n := four.ShardOf(ev)
		require.Equal(t, n, four.ShardOf(ev), "one event, one shard")
		count[n]++
		if m := five.ShardOf(ev); m != n {
			assert.Equal(t, 4, m, "%s moved from shard %d to %d, not to the new shard", ev, n, m)
			moved++
		}
	}
	for n, c := range count {
		// 2,500 expected; five standard deviations (43 each) either side.
		assert.InDelta(t, events/4, c, 220, "shard %d's share", n)
	}
	assert.InDelta(t, events/5, moved, 200, "about one event in five moves to the fifth shard")
	assert.Zero(t, Topology{Shards: 1}.ShardOf("sr:match:1"))
}

// On a real broker the topology declares twice alike: every process declares it.
func TestTopologyDeclaresAlikeTwice(t *testing.T) {
	url := testenv.AMQPVhost(t)
	conn, err := amqp.Dial(url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	top := Topology{Prefix: "t", Shards: 4}
	require.NoError(t, top.declare(ch))
	require.NoError(t, top.declare(ch), "a second process declares the same")
	for n := range top.Shards {
		q, err := ch.QueueDeclarePassive(top.ShardQueue(n), true, false, false, false, amqp.Table{"x-single-active-consumer": true})
		require.NoError(t, err)
		assert.Equal(t, top.ShardQueue(n), q.Name)
	}
}
