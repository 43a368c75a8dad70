package changes

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// Kind says which of the Sports API's two lists a change comes from.
type Kind uint8

// The kinds of change, one per list.
const (
	// FixtureChange is an entry of fixtures/changes.xml: the event's fixture (start
	// time, competitors, venue, status) changed.
	FixtureChange Kind = iota + 1
	// ResultChange is an entry of results/changes.xml: the event's results changed.
	ResultChange
)

// kinds are the kinds in the order the manager polls their lists.
var kinds = [...]Kind{FixtureChange, ResultChange}

// kindNames are the kinds' text forms, by kind; the stores keep these.
var kindNames = [...]string{FixtureChange: "fixture", ResultChange: "result"}

// String returns "fixture" or "result", or the number of a kind it does not know.
func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) valid() bool { return k == FixtureChange || k == ResultChange }

// MarshalText implements encoding.TextMarshaler: "fixture" or "result".
func (k Kind) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, fmt.Errorf("changes: unknown kind %d", uint8(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	for _, c := range kinds {
		if kindNames[c] == string(b) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("changes: unknown kind %q", b)
}

// list is the Sports API's list of the kind, as its path names it.
func (k Kind) list() string {
	if k == ResultChange {
		return "results"
	}
	return "fixtures"
}

// Change is one entry of a list: the event whose fixture or results changed, and when.
// A change is the pair of the two: the same event listed again at a later time is a
// new change.
type Change struct {
	// Kind says which list the change is from.
	Kind Kind `json:"kind"`
	// Event is the sport event (sport_event_id), such as sr:match:12345.
	Event feed.URN `json:"event"`
	// UpdatedAt is the change's update_time, in UTC and to the microsecond, as every
	// Store keeps it.
	UpdatedAt time.Time `json:"updated_at"`
}

// String returns the change as "fixture change of sr:match:1 at 2026-01-01T12:00:00Z",
// as the manager's errors name it.
func (c Change) String() string {
	return fmt.Sprintf("%s change of %s at %s", c.Kind, c.Event, c.UpdatedAt.Format(time.RFC3339Nano))
}

// compareChanges orders changes by time, then by event, the order the manager delivers
// them in: a list comes in the API's order, and ties need one order of their own.
func compareChanges(c, d Change) int {
	return cmp.Or(c.UpdatedAt.Compare(d.UpdatedAt), compareURN(c.Event, d.Event))
}

func compareURN(a, b feed.URN) int {
	return cmp.Or(cmp.Compare(a.Prefix, b.Prefix), cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID))
}

// Listener is told of each change once. The manager makes one call at a time, a list's
// changes in the order of their times, and waits for each.
//
// A listener that returns an error, or panics, has not taken the change: it is not
// marked delivered, the rest of its list waits, and the change is offered again at the
// next poll, before anything later. So return an error for what a retry may mend (a
// database that is down), and log and return nil for what it never will, or the list
// stops there until the API no longer lists the change (after a day). The other list
// goes on meanwhile. ctx is Run's, which ends when the manager is closed, or Poll's.
type Listener interface {
	OnChange(ctx context.Context, c Change) error
}

// ListenerFunc is a function that is a Listener.
type ListenerFunc func(ctx context.Context, c Change) error

// OnChange calls f.
func (f ListenerFunc) OnChange(ctx context.Context, c Change) error { return f(ctx, c) }
