package feed

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// urnTests holds the URN vectors of Sportradar's SDKs, valid and invalid, beside feedkit's
// own. The grammar is the one both enforce: Urn.cs in UnifiedOddsSdkNetCore
// (\A[a-zA-Z]+:[a-zA-Z_]+:-?\d+\z, then long.Parse and a nonzero id) and URN.java in
// UnifiedOddsSdkJava ([a-zA-Z]+:[a-zA-Z_2]+:[-\d]+, then Long.valueOf and a nonzero id).
var urnTests = []struct {
	in      string
	want    URN
	wantErr string // a part of the error; "" for a valid URN
}{
	// UnifiedOddsSdkNetCore, src/Tests/.../Messages/UrnTests.cs.
	{in: "match:1234", wantErr: `want prefix:type:id`},                          // MissingPrefixIsNotAllowed
	{in: "sr:1234", wantErr: `want prefix:type:id`},                             // MissingTypeIsNotAllowed
	{in: "sr:match1:12333", wantErr: `type "match1": want ASCII letters`},       // NumberInTypeIsNotAllowed
	{in: "sr:ma-tch:1232", wantErr: `type "ma-tch": want ASCII letters`},        // MinusInTypeIsNotAllowed
	{in: "sr:event_tournament:1232", want: URN{"sr", "event_tournament", 1232}}, // UnsupportedTypeIsNotAllowed: parses, type group unknown
	{in: "sr:match", wantErr: `want prefix:type:id`},                            // MissingIdIsNotAllowed
	{in: "sr:match:12a34", wantErr: `id "12a34" is not an integer`},             // LetterInIdIsNotAllowed
	{in: "sr:match:123_4", wantErr: `id "123_4" is not an integer`},             // UnderscoreInIdIsNotAllowed
	{in: "sr:sport_event:1234", want: URN{"sr", "sport_event", 1234}},           // SportEventResourceIsSupported
	{in: "vf:match:1234", want: URN{"vf", "match", 1234}},                       // VfPrefixIsAllowed
	{in: "sr:race_event:1234", want: URN{"sr", "race_event", 1234}},             // RaceEventResourceIsSupported
	{in: "sr:season:1234", want: URN{"sr", "season", 1234}},                     // SeasonResourceIsSupported
	{in: "sr:tournament:1234", want: URN{"sr", "tournament", 1234}},             // TournamentResourceIsSupported
	{in: "sr:simple_tournament:1234", want: URN{"sr", "simple_tournament", 1234}},
	{in: "sr:race_tournament:1234", want: URN{"sr", "race_tournament", 1234}},
	{in: "wns:draw:-2143997118", want: URN{"wns", "draw", -2143997118}}, // UrnWithNegativeId
	{in: "ccc:match:1234", want: URN{"ccc", "match", 1234}},             // CustomEventUrn
	{in: "ccc:simple_tournament:1234", want: URN{"ccc", "simple_tournament", 1234}},
	{in: "sr:group:1234", want: URN{"sr", "group", 1234}},   // SrGroupRoundUrn
	{in: "sr:abcde:1234", want: URN{"sr", "abcde", 1234}},   // ParseCustomTypeUrn
	{in: "ccc:stage:1234", want: URN{"ccc", "stage", 1234}}, // CustomStageEventUrn

	// UnifiedOddsSdkJava, sdk-core/src/test/.../UrnTests.java, and the types its URN.java
	// lists: h2h_tournament is why its type class admits '2'.
	{in: "sr:match:12345", want: URN{"sr", "match", 12345}},
	{in: "ccc:simple_tournament:12345", want: URN{"ccc", "simple_tournament", 12345}},
	{in: "sr:simple_team:12345", want: URN{"sr", "simple_team", 12345}},
	{in: "sr:simpleteam:12345", want: URN{"sr", "simpleteam", 12345}},
	{in: "sr:h2h_tournament:12345", want: URN{"sr", "h2h_tournament", 12345}},
	{in: "sr:competition_group:1", want: URN{"sr", "competition_group", 1}},

	// The cases: negative ids in bodies, ids to the ends of int64.
	{in: "sr:match:-5555197", want: URN{"sr", "match", -5555197}},
	{in: "sr:match:-2", want: URN{"sr", "match", -2}},
	{in: "sr:match:-1", want: URN{"sr", "match", -1}},
	{in: "sr:match:9223372036854775807", want: URN{"sr", "match", math.MaxInt64}},
	{in: "sr:match:-9223372036854775808", want: URN{"sr", "match", math.MinInt64}},
	{in: "sr:match:999999999999999999", want: URN{"sr", "match", 999999999999999999}},
	{in: "sr:match:1000000000000000000", want: URN{"sr", "match", 1000000000000000000}},
	{in: "sr:match:-1000000000000000000", want: URN{"sr", "match", -1000000000000000000}},
	{in: "sr:match:0000000000000000000000042", want: URN{"sr", "match", 42}}, // the SDKs' Long.valueOf and long.Parse accept leading zeros
	{in: "sr:match:007", want: URN{"sr", "match", 7}},
	{in: "SR:Match:1", want: URN{"SR", "Match", 1}},
	{in: "wns:draw:7", want: URN{"wns", "draw", 7}},
	{in: "sr:_:1", want: URN{"sr", "_", 1}},
	{in: "sr:match:9223372036854775808", wantErr: `id "9223372036854775808" is out of range`},
	{in: "sr:match:-9223372036854775809", wantErr: `id "-9223372036854775809" is out of range`},
	{in: "sr:match:18446744073709551616", wantErr: `is out of range`},
	{in: "sr:match:0", wantErr: `id "0" is zero`},
	{in: "sr:match:-0", wantErr: `id "-0" is zero`},
	{in: "sr:match:0000000000000000000000", wantErr: `is zero`},

	// Everything else the grammar refuses.
	{in: "", wantErr: `want prefix:type:id`},
	{in: "sr", wantErr: `want prefix:type:id`},
	{in: ":match:1", wantErr: `prefix "": want ASCII letters`},
	{in: "sr::1", wantErr: `type "": want ASCII letters`},
	{in: "sr:match:", wantErr: `id "" is not an integer`},
	{in: "sr:match:-", wantErr: `id "-" is not an integer`},
	{in: "sr:match:--1", wantErr: `id "--1" is not an integer`},
	{in: "sr:match:1-2", wantErr: `id "1-2" is not an integer`},
	{in: "sr:match:+1", wantErr: `id "+1" is not an integer`},
	{in: "sr:match: 1", wantErr: `id " 1" is not an integer`},
	{in: "sr:match:1:2", wantErr: `id "1:2" is not an integer`},
	{in: "sr:match:x", wantErr: `id "x" is not an integer`},
	{in: "sr:match:١٢", wantErr: `is not an integer`}, // non-ASCII digits
	{in: "s1:match:1", wantErr: `prefix "s1": want ASCII letters`},
	{in: "s_r:match:1", wantErr: `prefix "s_r": want ASCII letters`},
	{in: "sr:match3:1", wantErr: `type "match3"`},
	{in: "sr:ma.tch:1", wantErr: `type "ma.tch"`},
	{in: "sr:mätch:1", wantErr: `type "mätch"`},
	{in: "sr:match :1", wantErr: `type "match "`},
	{in: "sr :match:1", wantErr: `prefix "sr "`},
	{in: "sr:mat@ch:1", wantErr: `type "mat@ch"`},
	{in: "sr:mat[ch:1", wantErr: `type "mat[ch"`},
}

func TestParseURN(t *testing.T) {
	for _, tt := range urnTests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseURN(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Contains(t, err.Error(), `feed: URN "`+tt.in+`"`, "the error quotes the URN")
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			checkURNRoundTrip(t, got)
		})
	}
}

// checkURNRoundTrip asserts that String, AppendText and MarshalText give one text, which
// ParseURN and UnmarshalText read back to u.
func checkURNRoundTrip(t *testing.T, u URN) {
	t.Helper()
	s := u.String()
	appended, err := u.AppendText([]byte("x"))
	require.NoError(t, err)
	assert.Equal(t, "x"+s, string(appended))
	marshalled, err := u.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, s, string(marshalled))
	back, err := ParseURN(s)
	require.NoError(t, err, "%q", s)
	assert.Equal(t, u, back)
	var text URN
	require.NoError(t, text.UnmarshalText(marshalled))
	assert.Equal(t, u, text)
}

func TestURNText(t *testing.T) {
	assert.Equal(t, "sr:match:-5555197", URN{"sr", "match", -5555197}.String())
	assert.Equal(t, "sr:match:-9223372036854775808", URN{"sr", "match", math.MinInt64}.String())
	assert.Equal(t, "", URN{}.String())
	assert.True(t, URN{}.IsZero())
	assert.Panics(t, func() { MustParseURN("bad") })
	assert.Equal(t, URN{"sr", "match", -1}, MustParseURN("sr:match:-1"))

	var v URN
	require.NoError(t, v.UnmarshalText([]byte("vf:match:9")))
	assert.Equal(t, URN{"vf", "match", 9}, v)
	require.NoError(t, v.UnmarshalText(nil))
	assert.True(t, v.IsZero())
	assert.ErrorContains(t, v.UnmarshalText([]byte("sr:match1:1")), `type "match1"`)
}

// The common parts are constants, so that a URN decoded from a message keeps no part of
// the message alive; the others are copies.
func TestParseURNDoesNotKeepTheInput(t *testing.T) {
	in := []byte("custom:thing:-12")
	u, err := ParseURN(string(in))
	require.NoError(t, err)
	copy(in, "xxxxxxxxxxxx")
	assert.Equal(t, URN{"custom", "thing", -12}, u)
}

func TestParseURNAllocations(t *testing.T) {
	for _, s := range []string{"sr:match:-9536715", "sr:match:9223372036854775807", "vf:season:1"} {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := ParseURN(s); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "%s", s)
	}
}

// FuzzParseURN: whatever parses formats to a text that parses to the same URN, and that
// text is canonical (formatting it again changes nothing); whatever is refused gets an
// error that quotes it.
func FuzzParseURN(f *testing.F) {
	for _, tt := range urnTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURN(s)
		if err != nil {
			require.Zero(t, u)
			require.True(t, strings.HasPrefix(err.Error(), "feed: URN "), "%v", err)
			return
		}
		require.False(t, u.IsZero())
		require.NotZero(t, u.ID)
		formatted := u.String()
		again, err := ParseURN(formatted)
		require.NoError(t, err, "%q formats to %q", s, formatted)
		require.Equal(t, u, again)
		require.Equal(t, formatted, again.String())
		// A routing key carries the same URN, in its canonical form.
		key := "hi.-.live.odds_change.1." + u.Prefix + ":" + u.Type + "." + formatted[len(u.Prefix)+len(u.Type)+2:] + ".-"
		k, err := ParseRoutingKey(key)
		require.NoError(t, err, "%q", key)
		require.Equal(t, u, k.Event)
	})
}
