package changes_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// fixtureChanges is shaped as the API's fixtures/changes.xml: times to the second with
// the offset spelled out, ties, in no particular order.
const fixtureChanges = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<fixture_changes xmlns="http://schemas.sportradar.com/sportsapi/v1/unified" generated_at="2024-10-16T10:31:20+00:00">
  <fixture_change sport_event_id="sr:match:50383677" update_time="2024-10-16T10:20:35+00:00"/>
  <fixture_change sport_event_id="sr:match:54167709" update_time="2024-10-16T10:20:26+00:00"/>
  <fixture_change sport_event_id="sr:match:51467749" update_time="2024-10-16T10:20:26+00:00"/>
  <fixture_change sport_event_id="sr:stage:1021" update_time="2024-10-16T12:20:25+02:00"/>
</fixture_changes>`

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParseChangesReadsTheAPIsLists(t *testing.T) {
	list, err := changes.ParseChanges([]byte(fixtureChanges))
	require.NoError(t, err)
	assert.Equal(t, []changes.Change{
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:match:50383677"), UpdatedAt: at("2024-10-16T10:20:35Z")},
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:match:54167709"), UpdatedAt: at("2024-10-16T10:20:26Z")},
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:match:51467749"), UpdatedAt: at("2024-10-16T10:20:26Z")},
		{Kind: changes.FixtureChange, Event: feed.MustParseURN("sr:stage:1021"), UpdatedAt: at("2024-10-16T10:20:25Z")},
	}, list, "in the document's order, in UTC")
	assert.Equal(t, time.UTC, list[3].UpdatedAt.Location())

	results := `<result_changes generated_at="2024-10-16T10:31:20+00:00">
	  <result_change sport_event_id="vf:match:-7" update_time="2024-10-16T10:20:35.1234567+00:00"/>
	  <result_change sport_event_id="sr:match:2" update_time="2024-10-16T10:20:35"/>
	  <something_new sport_event_id="x"/>
	  <fixture_change sport_event_id="sr:match:3" update_time="2024-10-16T10:20:35Z"/>
	</result_changes>`
	list, err = changes.ParseChanges([]byte(results))
	require.NoError(t, err)
	assert.Equal(t, []changes.Change{
		{Kind: changes.ResultChange, Event: feed.MustParseURN("vf:match:-7"), UpdatedAt: at("2024-10-16T10:20:35.123456Z")},
		{Kind: changes.ResultChange, Event: feed.MustParseURN("sr:match:2"), UpdatedAt: at("2024-10-16T10:20:35Z")},
	}, list, "to the microsecond; a time without an offset is UTC; other elements skipped")

	list, err = changes.ParseChanges([]byte(`<fixture_changes generated_at="2024-10-16T10:31:20+00:00"/>`))
	require.NoError(t, err)
	assert.Empty(t, list)
}

// A document the package cannot read whole is refused, saying what and where.
func TestParseChangesRefusals(t *testing.T) {
	for _, c := range []struct{ doc, err string }{
		{`not xml`, "changes: not a changes list: xml syntax error at byte 0: no root element, only text"},
		{`<fixture_changes><fixture_change`, "changes: not a changes list: xml syntax error at byte 32: unexpected end of input in a start tag"},
		{`<fixture_changes><fixture_change sport_event_id="sr:match:1" sport_event_id="sr:match:2" update_time="2024-10-16T10:20:35Z"/></fixture_changes>`,
			"attribute sport_event_id appears twice"},
		{`<response response_code="FORBIDDEN"/>`, "changes: <response> is not a changes list (<fixture_changes> or <result_changes>)"},
		{`<fixture_changes><fixture_change update_time="2024-10-16T10:20:35+00:00"/></fixture_changes>`,
			"changes: <fixture_changes>: fixture_change[0].sport_event_id is missing"},
		{`<fixture_changes><fixture_change sport_event_id="sr:match:1" update_time="2024-10-16T10:20:35Z"/><fixture_change sport_event_id="match:2" update_time="2024-10-16T10:20:35Z"/></fixture_changes>`,
			`changes: <fixture_changes>: fixture_change[1].sport_event_id "match:2": `},
		{`<result_changes><result_change sport_event_id="sr:match:1"/></result_changes>`,
			"changes: <result_changes>: result_change[0].update_time is missing"},
		{`<result_changes><result_change sport_event_id="sr:match:1" update_time="yesterday"/></result_changes>`,
			`changes: <result_changes>: result_change[0].update_time "yesterday": not an xs:dateTime`},
	} {
		_, err := changes.ParseChanges([]byte(c.doc))
		require.Error(t, err, c.doc)
		assert.Contains(t, err.Error(), c.err, c.doc)
	}
}

func TestKindText(t *testing.T) {
	for _, k := range []changes.Kind{changes.FixtureChange, changes.ResultChange} {
		b, err := k.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, k.String(), string(b))
		var back changes.Kind
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, k, back)
	}
	assert.Equal(t, "fixture", changes.FixtureChange.String())
	assert.Equal(t, "result", changes.ResultChange.String())
	assert.Equal(t, "Kind(9)", changes.Kind(9).String())
	_, err := changes.Kind(0).MarshalText()
	require.Error(t, err)
	var k changes.Kind
	require.EqualError(t, k.UnmarshalText([]byte("odds")), `changes: unknown kind "odds"`)

	c := changes.Change{Kind: changes.ResultChange, Event: feed.MustParseURN("sr:match:1"), UpdatedAt: at("2026-01-01T12:00:00Z")}
	assert.Equal(t, "result change of sr:match:1 at 2026-01-01T12:00:00Z", c.String())
}
