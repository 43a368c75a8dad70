package feed

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// One fuzz target per decoder. Each asserts that the decoder never panics, that an error is
// a *DecodeError, and that wherever encoding/xml accepts the input the fast decoder accepts
// it with the same result.

func FuzzDecodeOddsChange(f *testing.F)            { fuzzDecoder(f, MessageOddsChange) }
func FuzzDecodeBetStop(f *testing.F)               { fuzzDecoder(f, MessageBetStop) }
func FuzzDecodeBetSettlement(f *testing.F)         { fuzzDecoder(f, MessageBetSettlement) }
func FuzzDecodeRollbackBetSettlement(f *testing.F) { fuzzDecoder(f, MessageRollbackBetSettlement) }
func FuzzDecodeBetCancel(f *testing.F)             { fuzzDecoder(f, MessageBetCancel) }
func FuzzDecodeRollbackBetCancel(f *testing.F)     { fuzzDecoder(f, MessageRollbackBetCancel) }
func FuzzDecodeFixtureChange(f *testing.F)         { fuzzDecoder(f, MessageFixtureChange) }
func FuzzDecodeAlive(f *testing.F)                 { fuzzDecoder(f, MessageAlive) }
func FuzzDecodeSnapshotComplete(f *testing.F)      { fuzzDecoder(f, MessageSnapshotComplete) }

func fuzzDecoder(f *testing.F, typ MessageType) {
	for _, fx := range fixtures(f) {
		if fx.typ == typ && len(fx.body) < 4096 {
			f.Add(fx.body)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAgainstReference(t, typ, body)
	})
}

func FuzzPeek(f *testing.F) {
	for _, fx := range fixtures(f) {
		if len(fx.body) < 4096 {
			f.Add(fx.body)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := Peek(body)
		want, refErr := referencePeek(body)
		if refErr != nil {
			return
		}
		require.NoError(t, err, "encoding/xml accepts %q", body)
		require.Equal(t, want, got)
	})
}

func FuzzParseRoutingKey(f *testing.F) {
	for _, tt := range routingKeyTests {
		f.Add(tt.key)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k, err := ParseRoutingKey(key)
		if err != nil {
			require.IsType(t, &RoutingKeyError{}, err)
			require.NotEmpty(t, err.Error())
			return
		}
		formatted := k.String()
		if strings.Count(key, ".") == 7 {
			require.Equal(t, key, formatted, "an eight-segment key formats back to itself")
		} else {
			require.Equal(t, key+".-", formatted, "a seven-segment key gains a - node segment")
		}
		again, err := ParseRoutingKey(formatted)
		require.NoError(t, err)
		require.Equal(t, k, again)
	})
}
