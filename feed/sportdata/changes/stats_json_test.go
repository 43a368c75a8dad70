package changes_test

import (
	"testing"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The manager's counters, its cursors and its changes encode to JSON in snake_case,
// every field set, and decode to the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[changes.Stats]())
	c := jsoncheck.Filled[changes.Cursor]()
	c.Events = []feed.URN{feed.MustParseURN("sr:match:1"), feed.MustParseURN("vf:match:-2")}
	jsoncheck.RoundTrip(t, c)
	ch := jsoncheck.Filled[changes.Change]()
	ch.Event = feed.MustParseURN("sr:stage:3")
	jsoncheck.RoundTrip(t, ch)
}
