package changes_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
	"github.com/feedkit/feedkit/internal/benchratio"
)

// refParse is the reference reading of a fixture changes list: encoding/xml, the values
// converted as ParseChanges converts them.
func refParse(b []byte) ([]changes.Change, error) {
	var doc struct {
		Entries []struct {
			Event string `xml:"sport_event_id,attr"`
			Time  string `xml:"update_time,attr"`
		} `xml:"fixture_change"`
	}
	if err := xml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		return nil, err
	}
	out := make([]changes.Change, 0, len(doc.Entries))
	for _, e := range doc.Entries {
		u, err := feed.ParseURN(e.Event)
		if err != nil {
			return nil, err
		}
		t, err := time.Parse(time.RFC3339, e.Time)
		if err != nil {
			return nil, err
		}
		out = append(out, changes.Change{Kind: changes.FixtureChange, Event: u, UpdatedAt: t.UTC().Truncate(time.Microsecond)})
	}
	return out, nil
}

// dayOfChanges is a fixture changes list of n entries, as a busy day lists them.
func dayOfChanges(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	b.WriteString(`<fixture_changes xmlns="http://schemas.sportradar.com/sportsapi/v1/unified" generated_at="2026-11-29T12:00:00+00:00">` + "\n")
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for i := range n {
		fmt.Fprintf(&b, `  <fixture_change sport_event_id="sr:match:%d" update_time="%s"/>`+"\n",
			60_000_000+i*7, start.Add(time.Duration(i)*17*time.Second).Format("2006-01-02T15:04:05-07:00"))
	}
	b.WriteString("</fixture_changes>\n")
	return b.Bytes()
}

// ParseChanges reads a list as the reference does.
func TestParseChangesAgreesWithTheReference(t *testing.T) {
	doc := dayOfChanges(500)
	got, err := changes.ParseChanges(doc)
	require.NoError(t, err)
	want, err := refParse(doc)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// BenchmarkParseChangesVsEncodingXML parses a day's list of 5,000 fixture changes and
// reports how many times faster ParseChanges is than the reference reading
// (x-of-encoding-xml), measured in the same run.
func BenchmarkParseChangesVsEncodingXML(b *testing.B) {
	doc := dayOfChanges(5000)
	ratio := benchratio.InTurn(func() { _, _ = changes.ParseChanges(doc) }, func() { _, _ = refParse(doc) })
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := changes.ParseChanges(doc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(ratio, "x-of-encoding-xml")
}
