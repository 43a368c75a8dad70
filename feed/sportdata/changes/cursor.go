package changes

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/feedkit/feedkit/feed"
)

// cursor is a list's Cursor as the manager holds it: the events as a set.
type cursor struct {
	at   time.Time
	seen map[feed.URN]bool
}

// load reads the cursors from the Store once. Until it has, nothing is polled: without
// its cursors a list would be delivered from its start again.
func (m *Manager) load(ctx context.Context) error {
	if m.loaded {
		return nil
	}
	cs, err := m.cfg.Store.Load(ctx)
	if err != nil {
		return m.fail(ctx, func(s *Stats) { s.StoreErrors++ }, fmt.Errorf("changes: loading the cursors: %w", err))
	}
	m.mu.Lock()
	for _, c := range cs {
		if c.Kind.valid() && !c.At.IsZero() {
			m.cursors[c.Kind] = cursor{at: c.At, seen: make(map[feed.URN]bool, len(c.Events))}
			for _, u := range c.Events {
				m.cursors[c.Kind].seen[u] = true
			}
		}
	}
	m.mu.Unlock()
	m.loaded = true
	return nil
}

// delivered reports whether the cursor of c's list is past c, or at it with c's event.
func (m *Manager) delivered(c Change) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.cursors[c.Kind]
	return c.UpdatedAt.Before(cur.at) || (c.UpdatedAt.Equal(cur.at) && cur.seen[c.Event])
}

// advance moves the cursor of c's list to c, which the listener took.
func (m *Manager) advance(c Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := &m.cursors[c.Kind]
	if c.UpdatedAt.After(cur.at) {
		cur.at, cur.seen = c.UpdatedAt, make(map[feed.URN]bool)
	}
	cur.seen[c.Event] = true
	m.stats.Delivered++
}

// Cursors returns how far each list has been delivered: a Cursor per kind that has
// delivered a change, in the order of the kinds. It is what the Store was last asked to
// save, or will be asked next.
func (m *Manager) Cursors() []Cursor {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Cursor
	for _, k := range kinds {
		if c, ok := m.cursorLocked(k); ok {
			out = append(out, c)
		}
	}
	return out
}

// cursorLocked returns the Cursor of kind k, with its events in order; false when the
// list has delivered nothing yet.
func (m *Manager) cursorLocked(k Kind) (Cursor, bool) {
	cur := m.cursors[k]
	if cur.at.IsZero() {
		return Cursor{}, false
	}
	c := Cursor{Kind: k, At: cur.at, Events: make([]feed.URN, 0, len(cur.seen))}
	for u := range cur.seen {
		c.Events = append(c.Events, u)
	}
	slices.SortFunc(c.Events, compareURN)
	return c, true
}
