package feed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/jsoncheck"
)

// The session's and the serial dispatcher's counters encode to JSON in snake_case, every
// field set, and decode to the same values.
func TestStatsEncodeToJSON(t *testing.T) {
	jsoncheck.RoundTrip(t, jsoncheck.Filled[feed.SessionStats]())
	jsoncheck.RoundTrip(t, jsoncheck.Filled[feed.DispatcherStats]())
}

// A message type encodes as the feed's name and decodes back; an unknown name is refused.
func TestMessageTypeTextForm(t *testing.T) {
	for _, typ := range append(feed.MessageTypes(), feed.MessageUnknown) {
		b, err := typ.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, typ.String(), string(b))
		var back feed.MessageType
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, typ, back)
	}
	var typ feed.MessageType
	assert.ErrorContains(t, typ.UnmarshalText([]byte("odds")), `unknown message type "odds"`)
}
