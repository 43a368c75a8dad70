package carousel

import (
	"context"
	"errors"
	"time"
)

// Item is one thing a cycle republishes: its id, and the time it was last modified,
// which windowed cycles select and order by.
type Item struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified,omitzero"`
}

// Query selects the items one iteration of a cycle republishes.
type Query struct {
	// Collection is the cycle's collection.
	Collection string
	// Start and End bound a window [Start, End) on Item.Modified. Both zero selects the
	// whole collection.
	Start, End time.Time
}

// Windowed reports whether q selects a time window rather than a whole collection.
func (q Query) Windowed() bool { return !q.Start.IsZero() || !q.End.IsZero() }

// Contains reports whether it belongs to q's window (always, for a whole collection).
func (q Query) Contains(it Item) bool {
	return !q.Windowed() || (!it.Modified.Before(q.Start) && it.Modified.Before(q.End))
}

// Less reports whether a comes before b in q's order: by ID for a whole collection, by
// Modified then ID for a window. Sources list in this order so that a cycle can resume
// after the last item it completed, even when items were added or removed meanwhile.
func (q Query) Less(a, b Item) bool {
	if q.Windowed() && !a.Modified.Equal(b.Modified) {
		return a.Modified.Before(b.Modified)
	}
	return a.ID < b.ID
}

// Source lists the items of a collection. Implementations must be safe for concurrent
// use: every cycle of a scheduler calls the same Source.
type Source interface {
	// Count returns how many items q selects.
	Count(ctx context.Context, q Query) (int, error)
	// List returns at most limit items that q selects and that come after after in q's
	// order (Query.Less), in that order. The zero Item is before every item. Fewer than
	// limit items means there are no more.
	List(ctx context.Context, q Query, after Item, limit int) ([]Item, error)
}

// Publication is one republish: which item, for which cycle, announced as which origin.
type Publication struct {
	Cycle      string
	Origin     string
	Collection string
	Item       Item
}

// Publisher republishes one item. A returned error is counted in the cycle's metadata and
// the cycle goes on with the next item; a Publisher that wants retries does them itself
// (HTTPPublisher does, boundedly). Implementations must be safe for concurrent use.
type Publisher interface {
	Publish(ctx context.Context, p Publication) error
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, p Publication) error

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, p Publication) error { return f(ctx, p) }

// MetadataStore keeps the metadata of cycles across restarts. Implementations must be
// safe for concurrent use.
type MetadataStore interface {
	// Load returns the metadata last saved for the cycle id; ok is false when there is none.
	Load(ctx context.Context, id string) (m CycleMetadata, ok bool, err error)
	// Save stores m under m.CycleID, replacing what was there.
	Save(ctx context.Context, m CycleMetadata) error
	// Delete forgets the cycle id; deleting what is not there is not an error.
	Delete(ctx context.Context, id string) error
}

// Toggle tells a scheduler whether this instance is the active one. The scheduler asks
// every Config.ToggleInterval: it starts its cycles when the answer turns true and shuts
// them down, saving their metadata, when it turns false or Active fails.
type Toggle interface {
	Active(ctx context.Context) (bool, error)
}

// ToggleFunc adapts a function to Toggle.
type ToggleFunc func(ctx context.Context) (bool, error)

// Active calls f.
func (f ToggleFunc) Active(ctx context.Context) (bool, error) { return f(ctx) }

// Promoter is a Toggle that an operator can make active: Scheduler.Start calls Promote
// when the toggle says passive, so that POST /scheduler/start takes over after a
// failover that the toggle would not take over by itself.
type Promoter interface {
	Toggle
	// Promote makes Active report true from now on, or fails (ErrLeaseHeld when another
	// instance is active).
	Promote(ctx context.Context) error
}

var (
	// ErrNotFound is returned for a cycle id the scheduler does not have.
	ErrNotFound = errors.New("carousel: no such cycle")
	// ErrExists is returned when adding a cycle whose name is taken.
	ErrExists = errors.New("carousel: a cycle of that name exists")
	// ErrPassive is returned by Scheduler.Start when the toggle says this instance is
	// passive and cannot be promoted.
	ErrPassive = errors.New("carousel: this instance is passive")
	// ErrLeaseHeld is returned by Promote when another instance holds the lease.
	ErrLeaseHeld = errors.New("carousel: another instance is active")
	// ErrNotAdjustable is returned when setting the throttle of a windowed cycle, whose
	// throttle is computed from its window.
	ErrNotAdjustable = errors.New("carousel: the throttle of a windowed cycle is computed, not set")
)
