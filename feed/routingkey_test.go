package feed

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var routingKeyTests = []struct {
	key     string
	want    RoutingKey
	wantErr string
}{
	{key: "hi.-.live.odds_change.1.sr:match.1234.-", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "match", 1234}}},
	{key: "lo.pre.-.bet_settlement.1.sr:match.1234.-", want: RoutingKey{
		Priority: PriorityLow, Prematch: true, Type: MessageBetSettlement, SportID: 1, Event: URN{"sr", "match", 1234}}},
	{key: "-.-.-.alive.-.-.-.-", want: RoutingKey{Type: MessageAlive}},
	{key: "-.-.-.snapshot_complete.-.-.-", want: RoutingKey{Type: MessageSnapshotComplete}},
	{key: "-.-.-.snapshot_complete.-.-.-.42", want: RoutingKey{Type: MessageSnapshotComplete, Node: Node(42)}},
	{key: "hi.virt.live.bet_stop.1111.vf:match.987654321.-7", want: RoutingKey{
		Priority: PriorityHigh, Virtual: true, Live: true, Type: MessageBetStop, SportID: 1111,
		Event: URN{"vf", "match", 987654321}, Node: Node(-7)}},
	{key: "lo.pre.-.fixture_change.5.sr:stage.42.0", want: RoutingKey{
		Priority: PriorityLow, Prematch: true, Type: MessageFixtureChange, SportID: 5,
		Event: URN{"sr", "stage", 42}, Node: Node(0)}},
	{key: "hi.-.live.rollback_bet_cancel.1.sr:simple_tournament.77.-", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageRollbackBetCancel, SportID: 1,
		Event: URN{"sr", "simple_tournament", 77}}},

	// Negative and 19-digit event ids; the first two are the .NET SDK's
	// RegexRoutingKeyParserTests (OddsChangeKeyWithNegativeIdIsParsedCorrectly, CustomKey).
	{key: "hi.-.live.odds_change.6.sr:match.-9536715", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 6, Event: URN{"sr", "match", -9536715}}},
	{key: "hi.pre.-.odds_change.21.sr:match.-5555197.-", want: RoutingKey{
		Priority: PriorityHigh, Prematch: true, Type: MessageOddsChange, SportID: 21, Event: URN{"sr", "match", -5555197}}},
	{key: "lo.-.live.bet_settlement.5.sr:match.9583179", want: RoutingKey{
		Priority: PriorityLow, Live: true, Type: MessageBetSettlement, SportID: 5, Event: URN{"sr", "match", 9583179}}},
	{key: "hi.-.live.odds_change.6.sr:match.9536715", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 6, Event: URN{"sr", "match", 9536715}}},
	{key: "-.-.-.snapshot_complete.-.-.-.-", want: RoutingKey{Type: MessageSnapshotComplete}},
	{key: "hi.-.live.odds_change.1.sr:match.-1.-", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "match", -1}}},
	{key: "hi.-.live.odds_change.1.sr:match.9223372036854775807.-", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "match", math.MaxInt64}}},
	{key: "hi.-.live.odds_change.1.sr:match.-9223372036854775808.-", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "match", math.MinInt64}}},
	{key: "hi.-.live.odds_change.1.sr:match.1000000000000000000.-", want: RoutingKey{
		Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "match", 1e18}}},
	{key: "lo.pre.-.odds_change.1.sr:h2h_tournament.7.-", want: RoutingKey{
		Priority: PriorityLow, Prematch: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "h2h_tournament", 7}}},

	// The .NET SDK's refused keys: a misspelt type, a missing dot, a sport that is not a number.
	{key: "hi.-.live.oddschange.6.sr:match.9536715", wantErr: `segment 4 (type) "oddschange": unknown message type`},
	{key: "hi.-.live.odds_change.6sr:match.9536715", wantErr: `6 segments, want 7 or 8`},
	{key: "hi.-.live.odds_change.6b.sr:match.9536715", wantErr: `segment 5 (sport) "6b"`},
	// Ids out of int64, not canonical, zero; URN parts outside the SDKs' grammar.
	{key: "hi.-.live.odds_change.1.sr:match.9223372036854775808.-", wantErr: `segment 7 (eventId) "9223372036854775808": the event id is out of range`},
	{key: "hi.-.live.odds_change.1.sr:match.-9223372036854775809.-", wantErr: `segment 7 (eventId) "-9223372036854775809": the event id is out of range`},
	{key: "hi.-.live.odds_change.1.sr:match.99999999999999999999999.-", wantErr: `the event id is out of range`},
	{key: "hi.-.live.odds_change.1.sr:match.0.-", wantErr: `segment 7 (eventId) "0": the event id is zero`},
	{key: "hi.-.live.odds_change.1.sr:match.-0.-", wantErr: `segment 7 (eventId) "-0": the event id is zero`},
	{key: "hi.-.live.odds_change.1.sr:match.-01.-", wantErr: `segment 7 (eventId) "-01": the event id has leading zeros`},
	{key: "hi.-.live.odds_change.1.sr:match.0012.-", wantErr: `segment 7 (eventId) "0012": the event id has leading zeros`},
	{key: "hi.-.live.odds_change.1.sr:match.--1.-", wantErr: `segment 7 (eventId) "--1": the event id is not an integer`},
	{key: "hi.-.live.odds_change.1.sr:match.+1.-", wantErr: `segment 7 (eventId) "+1": the event id is not an integer`},
	{key: "hi.-.live.odds_change.-1.sr:match.1.-", wantErr: `segment 5 (sport) "-1"`},
	{key: "hi.-.live.odds_change.1.sr:match1.1.-", wantErr: `segment 6 (urnPrefix) "sr:match1"`},
	{key: "hi.-.live.odds_change.1.sr:ma-tch.1.-", wantErr: `segment 6 (urnPrefix) "sr:ma-tch"`},
	{key: "hi.-.live.odds_change.1.s1:match.1.-", wantErr: `segment 6 (urnPrefix) "s1:match"`},
	{key: "hi.-.live.odds_change.1.:match.1.-", wantErr: `segment 6 (urnPrefix) ":match"`},
	{key: "hi.-.live.odds_change.1.sr:.1.-", wantErr: `segment 6 (urnPrefix) "sr:"`},

	{key: "", wantErr: `1 segments, want 7 or 8`},
	{key: "hi.-.live.odds_change.1.sr:match", wantErr: `6 segments, want 7 or 8`},
	{key: "hi.-.live.odds_change.1.sr:match.1.2.3", wantErr: `more than 8 segments`},
	{key: "mid.-.live.odds_change.1.sr:match.1234.-", wantErr: `segment 1 (priority) "mid"`},
	{key: "hi.post.live.odds_change.1.sr:match.1234.-", wantErr: `segment 2 (pre) "post"`},
	{key: "hi.-.dead.odds_change.1.sr:match.1234.-", wantErr: `segment 3 (live) "dead"`},
	{key: "hi.-.live.odds_chnage.1.sr:match.1234.-", wantErr: `segment 4 (type) "odds_chnage": unknown message type`},
	{key: "hi.-.live.odds_change.x.sr:match.1234.-", wantErr: `segment 5 (sport) "x"`},
	{key: "hi.-.live.odds_change.01.sr:match.1234.-", wantErr: `segment 5 (sport) "01"`},
	{key: "hi.-.live.odds_change.0.sr:match.1234.-", wantErr: `segment 5 (sport) "0"`},
	{key: "hi.-.live.odds_change.1.srmatch.1234.-", wantErr: `segment 6 (urnPrefix) "srmatch"`},
	{key: "hi.-.live.odds_change.1.sr:a:b.1234.-", wantErr: `segment 6 (urnPrefix) "sr:a:b"`},
	{key: "hi.-.live.odds_change.1.-.1234.-", wantErr: `segment 6 (urnPrefix) "-": missing for event id 1234`},
	{key: "hi.-.live.odds_change.1.sr:match.-.-", wantErr: `segment 7 (eventId) "-": missing for URN prefix sr:match`},
	{key: "hi.-.live.odds_change.1.sr:match.12a.-", wantErr: `segment 7 (eventId) "12a"`},
	{key: "hi.-.live.odds_change.1.sr:match.1234.node", wantErr: `segment 8 (nodeId) "node"`},
	{key: "hi.-.live.odds_change.1.sr:match.1234.+1", wantErr: `segment 8 (nodeId) "+1"`},
	{key: "hi.-.live.odds_change.1.sr:match.1234.", wantErr: `segment 8 (nodeId) ""`},
}

func TestParseRoutingKey(t *testing.T) {
	for _, tt := range routingKeyTests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := ParseRoutingKey(tt.key)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				var rke *RoutingKeyError
				require.ErrorAs(t, err, &rke)
				assert.Equal(t, tt.key, rke.Key)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := ParseRoutingKey(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, again)
			if !got.Event.IsZero() {
				// The event of a key is a URN that ParseURN reads back: one grammar for both.
				u, err := ParseURN(got.Event.String())
				require.NoError(t, err)
				assert.Equal(t, got.Event, u)
			}
		})
	}
}

func TestRoutingKeyString(t *testing.T) {
	k := RoutingKey{Priority: PriorityHigh, Live: true, Type: MessageOddsChange, SportID: 1, Event: URN{"sr", "match", 1234}}
	assert.Equal(t, "hi.-.live.odds_change.1.sr:match.1234.-", k.String())
	assert.Equal(t, "-.-.-.snapshot_complete.-.-.-.-", RoutingKey{Type: MessageSnapshotComplete}.String())
	k.Node = Node(-3)
	assert.Equal(t, "hi.-.live.odds_change.1.sr:match.1234.-3", k.String())
}

func TestNodeID(t *testing.T) {
	var none NodeID
	assert.False(t, none.IsSet())
	assert.Equal(t, "-", none.String())
	n, ok := Node(-1).Int()
	assert.True(t, ok)
	assert.Equal(t, -1, n)
	assert.Equal(t, "-1", Node(-1).String())
}

func TestMessageTypeNames(t *testing.T) {
	for _, typ := range MessageTypes() {
		assert.Equal(t, typ, ParseMessageType(typ.String()))
	}
	assert.Equal(t, MessageUnknown, ParseMessageType("cash_out"))
	assert.Equal(t, "unknown", MessageType(200).String())
	assert.True(t, MessageAlive.IsSystem())
	assert.True(t, MessageSnapshotComplete.IsSystem())
	assert.False(t, MessageOddsChange.IsSystem())
}

func TestNodeIDText(t *testing.T) {
	for _, n := range []NodeID{{}, Node(0), Node(7), Node(-3)} {
		b, err := n.MarshalText()
		require.NoError(t, err)
		var back NodeID
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, n, back, "%s", b)
	}
	var n NodeID
	require.NoError(t, n.UnmarshalText(nil))
	assert.False(t, n.IsSet())
	assert.ErrorContains(t, n.UnmarshalText([]byte("x1")), `node id "x1"`)
}
