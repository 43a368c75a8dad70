//go:build crash

package group_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/feed"
)

// The accounting's rules for duplicates, on made-up records: what a kill explains, and
// what it does not.
func TestCrashGroupDuplicatesAccounting(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := msgID{event: feed.URN{Prefix: "sr", Type: "match", ID: 1}, typ: feed.MessageOddsChange, at: 1}
	expected := map[crashDupKey]int{{m, 0}: 1}
	for _, tc := range []struct {
		name   string
		calls  []crashCall
		killed map[string]time.Time
		lost   map[string]bool
		bad    bool
	}{
		{name: "made again after a kill",
			calls:  []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "b#1", id: m, at: at(30)}},
			killed: map[string]time.Time{"a#1": at(20)}},
		{name: "the killed life's last batch committed after its successor's rows",
			calls:  []crashCall{{life: "b#1", id: m, at: at(30)}, {life: "a#1", id: m, at: at(40)}},
			killed: map[string]time.Time{"a#1": at(20)}},
		{name: "a chain of kills",
			calls: []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "b#1", id: m, at: at(30)},
				{life: "a#2", id: m, at: at(50)}},
			killed: map[string]time.Time{"a#1": at(20), "b#1": at(40)}},
		{name: "no kill", bad: true,
			calls: []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "b#1", id: m, at: at(30)}}},
		{name: "made again before the kill", bad: true,
			calls:  []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "b#1", id: m, at: at(15)}},
			killed: map[string]time.Time{"a#1": at(20)}},
		{name: "twice by one life", bad: true,
			calls:  []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "a#1", id: m, at: at(30)}},
			killed: map[string]time.Time{"a#1": at(20)}},
		{name: "twice by one life that lost its connection",
			calls: []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "a#1", id: m, at: at(30)}},
			lost:  map[string]bool{"a#1": true}},
		{name: "in two shards", bad: true,
			calls:  []crashCall{{life: "a#1", id: m, at: at(10)}, {life: "b#1", shard: 1, id: m, at: at(30)}},
			killed: map[string]time.Time{"a#1": at(20)}},
	} {
		d := crashCheckDuplicates(tc.calls, expected, tc.killed, tc.lost)
		if tc.bad {
			assert.Len(t, d.unexplained, 1, tc.name)
			continue
		}
		assert.Empty(t, d.unexplained, tc.name)
		assert.Equal(t, len(tc.calls)-1, d.live, tc.name)
	}
}
