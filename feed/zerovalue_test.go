package feed

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A market line and an outcome the feed sends without status or active decode to the
// zero values, so that the same message built by hand means the same: active.
func TestAbsentStatusAndActiveDecodeToZeroValues(t *testing.T) {
	body := []byte(`<odds_change product="1" event_id="sr:match:1" timestamp="1764152400000"><odds>` +
		`<market id="1"><outcome id="1" odds="1.5"/></market>` +
		`<market id="2" status="1"><outcome id="2" odds="2.5" active="1"/></market>` +
		`</odds></odds_change>`)
	got, err := Decode(MessageOddsChange, body)
	require.NoError(t, err)
	byHand := &OddsChange{Header: Header{Producer: 1, Event: URN{"sr", "match", 1}, Timestamp: ms(1764152400000)},
		Markets: []OddsMarket{
			{ID: 1, Outcomes: []OddsOutcome{{ID: "1", Odds: 1.5, HasOdds: true}}},
			{ID: 2, Outcomes: []OddsOutcome{{ID: "2", Odds: 2.5, HasOdds: true}}},
		}}
	assert.Equal(t, byHand, got)
	assert.Equal(t, MarketActive, got.(*OddsChange).Markets[0].Status)
	assert.False(t, got.(*OddsChange).Markets[0].Outcomes[0].Inactive)

	got, err = Decode(MessageOddsChange, []byte(`<odds_change product="1" event_id="sr:match:1" timestamp="1764152400000"><odds>`+
		`<market id="1" status="0"><outcome id="1" active="0"/></market></odds></odds_change>`))
	require.NoError(t, err)
	mk := got.(*OddsChange).Markets[0]
	assert.Equal(t, MarketDeactivated, mk.Status)
	assert.True(t, mk.Outcomes[0].Inactive)
}

// Every code the feed may send is a status of its own, which the decoder reads and Code
// gives back; the named
// statuses have the feed's numbers and names.
func TestMarketStatusCodes(t *testing.T) {
	seen := map[MarketStatus]bool{}
	for c := math.MinInt8; c <= math.MaxInt8; c++ {
		s := MarketStatusOfCode(int8(c))
		require.Equal(t, c, s.Code(), "code %d", c)
		require.False(t, seen[s], "code %d maps onto another code's status", c)
		seen[s] = true
		parsed, err := parseMarketStatusValue(strconv.Itoa(c))
		require.NoError(t, err)
		require.Equal(t, s, parsed, "the decoder reads code %d", c)
	}
	named := []struct {
		s    MarketStatus
		code int
		name string
	}{
		{MarketActive, 1, "active"}, {MarketDeactivated, 0, "deactivated"}, {MarketSuspended, -1, "suspended"},
		{MarketHandedOver, -2, "handed over"}, {MarketSettled, -3, "settled"}, {MarketCancelled, -4, "cancelled"},
	}
	for _, n := range named {
		assert.Equal(t, n.code, n.s.Code(), n.name)
		assert.Equal(t, n.name, n.s.String())
		assert.Equal(t, n.s, MarketStatusOfCode(int8(n.code)), n.name)
	}
	var zero MarketStatus
	assert.Equal(t, MarketActive, zero)
	assert.Equal(t, "market status 7", MarketStatusOfCode(7).String())
	assert.Equal(t, "market status -128", MarketStatusOfCode(math.MinInt8).String())
}
