package changes

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// document is a changes list as the API sends it: <fixture_changes> of <fixture_change>
// entries, or <result_changes> of <result_change> ones, each with the event's
// sport_event_id and its update_time.
type document struct {
	XMLName xml.Name
	Entries []entry `xml:",any"`
}

type entry struct {
	XMLName xml.Name
	Event   *string `xml:"sport_event_id,attr"`
	Time    *string `xml:"update_time,attr"`
}

// roots names each kind's document and its entries.
var roots = map[string]struct {
	kind  Kind
	entry string
}{
	"fixture_changes": {FixtureChange, "fixture_change"},
	"result_changes":  {ResultChange, "result_change"},
}

// ParseChanges reads a changes list: the body of fixtures/changes.xml or of
// results/changes.xml, whose root tells the kind of its changes. They are returned in
// the document's order, each time in UTC to the microsecond. Elements other than the
// list's entries are skipped, as the API may add some. A document that is not such a
// list, or an entry without a readable sport_event_id or update_time, is an error that
// says what and which entry: a list read in part would skip changes unseen.
func ParseChanges(body []byte) ([]Change, error) {
	var doc document
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("changes: not a changes list: %w", err)
	}
	root, ok := roots[doc.XMLName.Local]
	if !ok {
		return nil, fmt.Errorf("changes: <%s> is not a changes list (<fixture_changes> or <result_changes>)", doc.XMLName.Local)
	}
	out := make([]Change, 0, len(doc.Entries))
	i := 0
	for _, e := range doc.Entries {
		if e.XMLName.Local != root.entry {
			continue
		}
		c, err := e.change(root.kind)
		if err != nil {
			return nil, fmt.Errorf("changes: <%s>: %s[%d].%w", doc.XMLName.Local, root.entry, i, err)
		}
		out = append(out, c)
		i++
	}
	return out, nil
}

// change reads the entry; its error starts with the attribute's name, to follow the
// entry's in a message.
func (e entry) change(k Kind) (Change, error) {
	if e.Event == nil {
		return Change{}, errors.New("sport_event_id is missing")
	}
	u, err := feed.ParseURN(*e.Event)
	if err != nil {
		return Change{}, fmt.Errorf("sport_event_id %q: %w", *e.Event, err)
	}
	if e.Time == nil {
		return Change{}, errors.New("update_time is missing")
	}
	t, err := parseTime(*e.Time)
	if err != nil {
		return Change{}, fmt.Errorf("update_time %q: %w", *e.Time, err)
	}
	return Change{Kind: k, Event: u, UpdatedAt: t}, nil
}

// parseTime reads an xs:dateTime: with an offset, as the API writes them
// (2024-10-16T10:20:35+00:00), or without one, taken as UTC. The time is truncated to
// the microsecond, the finest every Store keeps, so that a change read again compares
// equal to the cursor saved for it.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s) // takes a fraction of a second too
	if err != nil {
		var err2 error
		if t, err2 = time.Parse("2006-01-02T15:04:05", s); err2 != nil {
			return time.Time{}, errors.New("not an xs:dateTime")
		}
	}
	return t.UTC().Truncate(time.Microsecond), nil
}
