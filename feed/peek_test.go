package feed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPeek(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			got, err := Peek(f.body)
			require.NoError(t, err)
			m, err := Decode(f.typ, f.body)
			require.NoError(t, err)
			h := m.MessageHeader()
			assert.Equal(t, Peeked{Type: f.typ, Producer: h.Producer, RequestID: h.RequestID}, got)
		})
	}
}

func TestPeekReadsOnlyTheRootStartTag(t *testing.T) {
	// The body after the start tag is broken; Peek does not look at it.
	got, err := Peek([]byte(`<odds_change product="3" request_id="9"><odds><market`))
	require.NoError(t, err)
	assert.Equal(t, Peeked{Type: MessageOddsChange, Producer: 3, RequestID: 9}, got)

	got, err = Peek([]byte(`<cash_out product="1"/>`))
	require.NoError(t, err)
	assert.Equal(t, MessageUnknown, got.Type)
}

func TestPeekErrors(t *testing.T) {
	for _, body := range []string{``, `garbage`, `<odds_change product="one"/>`, `<alive product="1`, `<alive request_id="1x"/>`} {
		_, err := Peek([]byte(body))
		assert.ErrorIs(t, err, ErrMalformedMessage, body)
	}
}

func TestPeekDoesNotAllocate(t *testing.T) {
	body := readFixture(t, "odds_change_recovery.xml")
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Peek(body); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}
