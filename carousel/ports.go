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

// Publication is one republish: which item, for which cycle, announced as which origin,
// and where it stands in the cycle. Cycle, Iteration and Item.ID identify it: the same
// item published again in the same iteration (after a restart or a failover, up to one
// checkpoint interval of items) carries the same three, and the next time round the
// cycle carries a greater Iteration. A consumer that must act once per round keeps the
// last iteration it saw of each cycle and item.
type Publication struct {
	// Cycle is the cycle's name.
	Cycle string
	// Origin is the cycle's origin system, which the publication is announced as.
	Origin string
	// Collection is the collection the item is in.
	Collection string
	// Item is the item republished.
	Item Item
	// Iteration is the cycle's iteration that publishes the item, from 1. An iteration
	// resumed after a restart or on another instance keeps its number.
	Iteration int
	// Position is the item's place in its iteration, from 1: the items the iteration
	// completed before it, plus one. A resumed iteration goes on from the position after
	// the last item it saved, counted in the collection as it is when it resumes (so
	// that it shifts when items before that one were added or removed meanwhile).
	Position int
}

// Publisher republishes one item. A returned error is counted in the cycle's metadata and
// the cycle goes on with the next item; a Publisher that wants retries does them itself
// (carouselhttp.Publisher does, boundedly). Implementations must be safe for concurrent use.
type Publisher interface {
	Publish(ctx context.Context, p Publication) error
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, p Publication) error

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, p Publication) error { return f(ctx, p) }

// Generation numbers the activations of the instances that share a Toggle: each time
// an instance becomes the active one, it is given a generation greater than every one
// given before, to it or to any other instance. It is the fencing token of the
// activation's progress writes: a MetadataStore refuses a save of a cycle from a
// generation older than one it has saved for that cycle (ErrFenced), so that an instance
// which lost the active role, and does not know it yet, cannot overwrite the progress of
// the one that holds it. Generation 0 is that of a toggle that does not number its
// activations (the default, always active): its saves are refused once a numbered one
// has saved. The generations of different toggles do not compare (a FileToggle's are
// times in nanoseconds, a Lease's count from 1): a deployment that moves its cycles to a
// toggle with smaller numbers deletes their saved progress first, or the store refuses
// their saves.
type Generation uint64

// MetadataStore keeps the metadata of cycles across restarts, fenced by the generation of
// the activation that saves it. Implementations must be safe for concurrent use.
type MetadataStore interface {
	// Load returns the metadata last saved for the cycle id; ok is false when there is none.
	Load(ctx context.Context, id string) (m CycleMetadata, ok bool, err error)
	// Save stores m under m.CycleID, replacing what was there, unless the cycle was saved
	// by a later generation than gen: then it leaves the store as it is and returns an
	// error wrapping ErrFenced. The check and the write are one atomic step. The store
	// keeps the greatest generation saved for each cycle; a save of the same generation
	// as the last is accepted.
	Save(ctx context.Context, m CycleMetadata, gen Generation) error
	// Delete forgets the cycle id, its generation included; deleting what is not there is
	// not an error. It is an operator's act, not fenced.
	Delete(ctx context.Context, id string) error
}

// Toggle tells a scheduler whether this instance is the active one. The scheduler asks
// every Config.ToggleInterval: it starts its cycles when the answer turns true and shuts
// them down, saving their metadata, when it turns false or Active fails.
type Toggle interface {
	// Active reports whether this instance is the active one and, when it is, the
	// Generation of its activation: the same from one call to the next while the
	// instance stays active, a greater one once it has been passive, or has lost the role
	// and taken it back, in between. A new generation is a new activation: the scheduler
	// restarts its cycles, each from the progress saved in the store.
	Active(ctx context.Context) (active bool, gen Generation, err error)
}

// ToggleFunc adapts a function to Toggle.
type ToggleFunc func(ctx context.Context) (bool, Generation, error)

// Active calls f.
func (f ToggleFunc) Active(ctx context.Context) (bool, Generation, error) { return f(ctx) }

// Promoter is a Toggle that an operator can make active: Scheduler.Start calls Promote
// when the toggle says passive, so that POST /scheduler/start takes over after a
// failover that the toggle would not take over by itself.
type Promoter interface {
	Toggle
	// Promote makes Active report true from now on, and returns the generation of the
	// activation; or fails (ErrLeaseHeld when another instance is active).
	Promote(ctx context.Context) (Generation, error)
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
	// ErrFenced is returned, wrapped, by MetadataStore.Save when the cycle was saved by a
	// later generation than the one saving: another instance has become active since.
	ErrFenced = errors.New("carousel: progress saved by a later activation (another instance is active)")
	// ErrNotAdjustable is returned when setting the throttle of a windowed cycle, whose
	// throttle is computed from its window.
	ErrNotAdjustable = errors.New("carousel: the throttle of a windowed cycle is computed, not set")
)
