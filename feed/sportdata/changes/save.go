package changes

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// saveTimeout bounds a save that outlives the poll's context (a manager closing): a
// store that does not answer by then is counted failed and asked again later.
const saveTimeout = 30 * time.Second

// save saves the cursor of kind k within ctx. A failure is reported, and the cursor
// marked to be saved again.
func (m *Manager) save(ctx context.Context, k Kind) error {
	m.mu.Lock()
	c, ok := m.cursorLocked(k)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	if err := m.cfg.Store.Save(ctx, c); err != nil {
		m.dirty[k] = true
		return m.fail(context.Background(), func(s *Stats) { s.StoreErrors++ }, fmt.Errorf("changes: saving the %s cursor: %w", k, err))
	}
	m.dirty[k] = false
	return nil
}

// saveDetached saves the cursor of kind k after the listener took a change: a manager
// closing must not stop that save halfway, so saveTimeout bounds it instead of ctx.
func (m *Manager) saveDetached(ctx context.Context, k Kind) error {
	ctx, cancel := saveContext(ctx)
	defer cancel()
	return m.save(ctx, k)
}

// saveDirty saves, within ctx, each cursor whose last save failed, and returns what
// failed.
func (m *Manager) saveDirty(ctx context.Context) error {
	var errs []error
	for _, k := range kinds {
		if m.dirty[k] {
			errs = append(errs, m.save(ctx, k))
		}
	}
	return errors.Join(errs...)
}

// saveContext returns a context for a save: ctx's values, not its end, bounded by
// saveTimeout.
func saveContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
}
