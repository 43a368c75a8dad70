package changes

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/xmlscan"
)

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
// says what and which entry: a list read in part would skip changes unseen. It reads
// on the kit's XML scanner, as strict as XML and an order of magnitude faster than
// encoding/xml.
func ParseChanges(body []byte) ([]Change, error) {
	src := string(body)
	var s xmlscan.Scanner
	s.Reset(src)
	if !s.Root() {
		return nil, fmt.Errorf("changes: not a changes list: %w", s.Err())
	}
	name := xmlscan.Local(s.Name())
	root, ok := roots[name]
	if !ok {
		return nil, fmt.Errorf("changes: <%s> is not a changes list (<fixture_changes> or <result_changes>)", name)
	}
	out := make([]Change, 0, strings.Count(src, "<"+root.entry+" "))
	for open := s.Open(); open && s.Child(); {
		if xmlscan.Local(s.Name()) != root.entry {
			s.Skip()
			continue
		}
		var e entry
		for n, v, ok := s.NextAttr(); ok; n, v, ok = s.NextAttr() {
			switch xmlscan.Local(n) {
			case "sport_event_id":
				e.event, e.hasEvent = v, true
			case "update_time":
				e.time, e.hasTime = v, true
			}
		}
		s.Skip()
		if s.Err() != nil {
			break
		}
		c, err := e.change(root.kind)
		if err != nil {
			return nil, fmt.Errorf("changes: <%s>: %s[%d].%w", name, root.entry, len(out), err)
		}
		out = append(out, c)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("changes: not a changes list: %w", err)
	}
	return out, nil
}

// entry is one change of the list as written: its attributes, and whether each was there.
type entry struct {
	event, time       string
	hasEvent, hasTime bool
}

// change reads the entry; its error starts with the attribute's name, to follow the
// entry's in a message.
func (e entry) change(k Kind) (Change, error) {
	if !e.hasEvent {
		return Change{}, errors.New("sport_event_id is missing")
	}
	u, err := feed.ParseURN(e.event)
	if err != nil {
		return Change{}, fmt.Errorf("sport_event_id %q: %w", e.event, err)
	}
	if !e.hasTime {
		return Change{}, errors.New("update_time is missing")
	}
	t, err := parseTime(e.time)
	if err != nil {
		return Change{}, fmt.Errorf("update_time %q: %w", e.time, err)
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
