package feedtest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
)

// Marshal leaves out the required attributes a message's SchemaViolations names, where
// their value is the zero, and writes them otherwise: a test can send a message that lacks
// them, and the decoder flags exactly those.
func TestMarshalWritesWhatTheSchemaRequiresUnlessTheHeaderSaysItWasMissing(t *testing.T) {
	h := feed.Header{Producer: 1, Event: feed.URN{Prefix: "sr", Type: "match", ID: 1}, Timestamp: ms(1764152400123)}
	lacking := func(v feed.SchemaViolation) feed.Header { h := h; h.SchemaViolations = v; return h }
	tests := []struct {
		name string
		m    feed.Message
	}{
		{"bet_stop/empty groups", &feed.BetStop{Header: h, MarketStatus: feed.MarketSuspended}},
		{"bet_stop/no groups", &feed.BetStop{Header: lacking(feed.MissingGroups), MarketStatus: feed.MarketSuspended}},
		{"bet_settlement/certainty 0", &feed.BetSettlement{Header: h}},
		{"bet_settlement/no certainty", &feed.BetSettlement{Header: lacking(feed.MissingCertainty)}},
		{"fixture_change/no start time", &feed.FixtureChange{Header: lacking(feed.MissingStartTime), ChangeType: 3}},
		{"odds_change/status 0 sent", &feed.OddsChange{Header: h, EventStatus: &feed.SportEventStatus{}}},
		{"odds_change/status parts missing", &feed.OddsChange{
			Header: lacking(feed.MissingStatus | feed.MissingMatchStatus | feed.MissingPeriodNumber | feed.MissingPeriodMatchStatusCode |
				feed.MissingPeriodScore | feed.MissingResultMatchStatusCode | feed.MissingResultScore),
			EventStatus: &feed.SportEventStatus{
				PeriodScores: []feed.PeriodScore{{Number: 1, MatchStatusCode: 6, HomeScore: 1}, {}},
				Results:      []feed.EventResult{{}, {MatchStatusCode: 100, HomeScore: 2, AwayScore: 1}},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := feedtest.Marshal(tt.m)
			assert.Equal(t, tt.m, decode(t, tt.m.Type(), body), "body: %s", body)
		})
	}
}
