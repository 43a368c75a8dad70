package feed

import (
	"math/rand/v2"
	"testing"

	"github.com/feedkit/feedkit/internal/topic"
	"github.com/stretchr/testify/assert"
)

func TestBindingKeys(t *testing.T) {
	assert.Equal(t, []string{"*.*.*.*.*.*.*", "*.*.*.*.*.*.*.-"}, AllMessages.BindingKeys(NodeID{}))
	assert.Equal(t, []string{"*.*.*.*.*.*.*", "*.*.*.*.*.*.*.-", "*.*.*.*.*.*.*.7"}, AllMessages.BindingKeys(Node(7)))
	assert.Equal(t, []string{
		"*.*.live.*.*.*.*", "*.*.live.*.*.*.*.-", "*.*.live.*.*.*.*.-2",
		"-.-.-.alive.-.-.-", "-.-.-.alive.-.-.-.-", "-.-.-.alive.-.-.-.-2",
		"-.-.-.snapshot_complete.-.-.-", "-.-.-.snapshot_complete.-.-.-.-", "-.-.-.snapshot_complete.-.-.-.-2",
	}, LiveMessagesOnly.BindingKeys(Node(-2)))
	assert.Equal(t, []string{
		"*.*.*.*.*.sr:match.5", "*.*.*.*.*.sr:match.5.-",
		"-.-.-.alive.-.-.-", "-.-.-.alive.-.-.-.-",
		"-.-.-.snapshot_complete.-.-.-", "-.-.-.snapshot_complete.-.-.-.-",
	}, SpecifiedMatchesOnly(MustParseURN("sr:match:5")).BindingKeys(NodeID{}))
}

func TestInterestNames(t *testing.T) {
	var zero MessageInterest
	assert.Equal(t, AllMessages, zero)
	assert.Equal(t, "all messages", zero.String())
	assert.Equal(t, "live messages only", LiveMessagesOnly.String())
	assert.Equal(t, "specified matches only (2)", SpecifiedMatchesOnly(URN{"sr", "match", 1}, URN{"sr", "match", 2}).String())
	events := []URN{{"sr", "match", 1}}
	mi := SpecifiedMatchesOnly(events...)
	events[0].ID = 99
	assert.Equal(t, []URN{{"sr", "match", 1}}, mi.Events(), "the interest keeps its own copy")
}

// The topic patterns from BindingKeys select exactly the keys the interest's rules select,
// for every interest, with and without a node id, over many random routing keys.
func TestBindingKeysSelectWhatTheInterestMeans(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	events := []URN{{"sr", "match", 1}, {"sr", "match", 2}, {"vf", "match", 3}, {"sr", "stage", 4}}
	interests := []MessageInterest{AllMessages, LiveMessagesOnly, PrematchMessagesOnly, HiPriorityMessagesOnly,
		LoPriorityMessagesOnly, VirtualSportMessagesOnly, SpecifiedMatchesOnly(events[0], events[2])}
	nodes := []NodeID{{}, Node(1), Node(-5)}
	types := MessageTypes()
	for i := 0; i < 3000; i++ {
		k := RoutingKey{Type: types[rng.IntN(len(types))]}
		if !k.Type.IsSystem() {
			k.Priority = Priority(1 + rng.IntN(2))
			switch rng.IntN(3) {
			case 0:
				k.Prematch = true
			case 1:
				k.Virtual = true
			}
			k.Live = rng.IntN(2) == 0
			k.SportID = 1 + rng.IntN(3)
			k.Event = events[rng.IntN(len(events))]
		}
		k.Node = nodes[rng.IntN(len(nodes))]
		key := k.String()
		short := key[:len(key)-len(k.Node.String())-1] // the seven-segment form
		for _, mi := range interests {
			for _, node := range nodes {
				want := mi.matches(k, node)
				assert.Equal(t, want, anyMatch(mi.BindingKeys(node), key), "%s for node %s: %s", mi, node, key)
				if !k.Node.IsSet() {
					assert.Equal(t, want, anyMatch(mi.BindingKeys(node), short), "%s for node %s: %s", mi, node, short)
				}
			}
		}
	}
}

func anyMatch(patterns []string, key string) bool {
	for _, p := range patterns {
		if topic.Compile(p).Match(key) {
			return true
		}
	}
	return false
}
