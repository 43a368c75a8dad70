package feed

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// One fuzz target per decoder. Each asserts that the decoder never panics, that an error is
// a *DecodeError, that it accepts exactly the inputs the reference accepts (encoding/xml
// reading the whole document, plus the well-formedness rules encoding/xml lacks, plus the
// schema's values), and that where both accept they agree. The seeds are the fixtures and
// every malformed case of issue 23.

func FuzzDecodeOddsChange(f *testing.F)            { fuzzDecoder(f, MessageOddsChange) }
func FuzzDecodeBetStop(f *testing.F)               { fuzzDecoder(f, MessageBetStop) }
func FuzzDecodeBetSettlement(f *testing.F)         { fuzzDecoder(f, MessageBetSettlement) }
func FuzzDecodeRollbackBetSettlement(f *testing.F) { fuzzDecoder(f, MessageRollbackBetSettlement) }
func FuzzDecodeBetCancel(f *testing.F)             { fuzzDecoder(f, MessageBetCancel) }
func FuzzDecodeRollbackBetCancel(f *testing.F)     { fuzzDecoder(f, MessageRollbackBetCancel) }
func FuzzDecodeFixtureChange(f *testing.F)         { fuzzDecoder(f, MessageFixtureChange) }
func FuzzDecodeAlive(f *testing.F)                 { fuzzDecoder(f, MessageAlive) }
func FuzzDecodeSnapshotComplete(f *testing.F)      { fuzzDecoder(f, MessageSnapshotComplete) }

// FuzzDecodeCashoutAcceptance is FuzzDecodeCashout (cashout_test.go) comparing acceptance
// too.
func FuzzDecodeCashoutAcceptance(f *testing.F) {
	for _, s := range cashoutSeeds {
		f.Add([]byte(s))
	}
	fuzzDecoder(f, MessageCashout)
}

func fuzzDecoder(f *testing.F, typ MessageType) {
	for _, fx := range fixtures(f) {
		if fx.typ == typ && len(fx.body) < 4096 {
			f.Add(fx.body)
		}
	}
	for _, c := range MalformedCases() {
		f.Add(c.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAcceptance(t, typ, body)
	})
}

func FuzzPeek(f *testing.F) {
	for _, fx := range fixtures(f) {
		if len(fx.body) < 4096 {
			f.Add(fx.body)
		}
	}
	for _, c := range MalformedCases() {
		f.Add(c.Body)
	}
	// Peek reads up to the end of the root's start tag: it accepts exactly what the
	// reference accepts of that much of the document.
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := Peek(body)
		want, refErr := referencePeek(body)
		if refErr != nil {
			require.Error(t, err, "Peek accepts %q, the reference refuses it: %v", body, refErr)
			return
		}
		require.NoError(t, err, "the reference accepts %q", body)
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

// checkAcceptance decodes body with both decoders: Decode must accept exactly when the
// reference does (encoding/xml reading the whole document, the well-formedness rules it
// lacks, and the schema's values), and then with the same result.
func checkAcceptance(t *testing.T, typ MessageType, body []byte) {
	t.Helper()
	got, err := Decode(typ, body)
	var want Message
	var refErr error
	if typ == MessageCashout {
		want, refErr = referenceCashout(body)
	} else {
		want, refErr = referenceDecode(typ, body)
	}
	if err != nil {
		require.Nil(t, got)
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		require.NotEmpty(t, de.Msg)
		require.Error(t, refErr, "Decode refuses %q (%v), the reference accepts it", body, err)
		return
	}
	require.NoError(t, refErr, "Decode accepts %q, the reference refuses it", body)
	// referenceDecode leaves the header's SchemaViolations zero; its own reference reads
	// them.
	sv, err := referenceSchemaViolations(typ, body)
	require.NoError(t, err)
	want.MessageHeader().SchemaViolations = sv
	// xs:double's NaN equals nothing, itself included: equalDecoded takes NaN for NaN.
	if !equalDecoded(want, got) {
		require.Equal(t, want, got, "decoders disagree on %q", body)
	}
}
