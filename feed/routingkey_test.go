package feed

import (
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

func TestURN(t *testing.T) {
	u, err := ParseURN("sr:match:1234")
	require.NoError(t, err)
	assert.Equal(t, URN{Prefix: "sr", Type: "match", ID: 1234}, u)
	assert.Equal(t, "sr:match:1234", u.String())
	assert.Equal(t, "wns:draw:7", MustParseURN("wns:draw:7").String())
	assert.Equal(t, "", URN{}.String())
	assert.True(t, URN{}.IsZero())

	for _, bad := range []string{"", "sr", "sr:match", ":match:1", "sr::1", "sr:match:", "sr:match:x", "sr:match:-1", "sr:match:1:2"} {
		_, err := ParseURN(bad)
		assert.Error(t, err, bad)
	}
	assert.Panics(t, func() { MustParseURN("bad") })

	var v URN
	require.NoError(t, v.UnmarshalText([]byte("vf:match:9")))
	assert.Equal(t, URN{"vf", "match", 9}, v)
	text, err := v.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "vf:match:9", string(text))
	require.NoError(t, v.UnmarshalText(nil))
	assert.True(t, v.IsZero())
	assert.Error(t, v.UnmarshalText([]byte("nope")))
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
	assert.Equal(t, MessageUnknown, ParseMessageType("cashout"))
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
