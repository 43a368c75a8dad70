package changes

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime/debug"
	"slices"
	"time"

	"github.com/feedkit/feedkit/feed"
)

const (
	// maxListSize bounds a list's document: a day of changes of every sport is some ten
	// thousand entries of a hundred bytes.
	maxListSize = 32 << 20
	// overlap is how far before its cursor a list is asked for. The API writes times to
	// the second and does not say whether afterDateTime is inclusive: a change at the
	// cursor's second listed after the last poll comes back either way, and what was
	// delivered already is told apart by the cursor.
	overlap = time.Second
	// reach is how old a cursor may be and still be asked from. The lists reach back a
	// day; an older bound is of no use, and the API might refuse it, so the list is then
	// asked for whole, what is older than the cursor skipped as delivered. An hour short
	// of the day leaves room for the API's clock and ours to disagree.
	reach = 23 * time.Hour
)

// pollAll polls both lists, loading the cursors first if they are not loaded yet.
func (m *Manager) pollAll(ctx context.Context) error {
	m.polling.Lock()
	defer m.polling.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	m.count(func(s *Stats) { s.Polls++ })
	if err := m.load(ctx); err != nil {
		return err
	}
	var errs []error
	for _, k := range kinds {
		if err := m.pollList(ctx, k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pollList reads the list of kind k from its cursor on and delivers what it has not
// delivered, in order, until the listener fails.
func (m *Manager) pollList(ctx context.Context, k Kind) error {
	if m.dirty[k] {
		_ = m.saveDetached(ctx, k) // before moving on, so that a store that is back is caught up
	}
	m.mu.Lock()
	at := m.cursors[k].at
	m.stats.Requests++
	m.mu.Unlock()
	path := m.path(k, at)
	body, err := m.api.Get(ctx, path, maxListSize)
	if err != nil {
		return m.fail(ctx, func(s *Stats) { s.RequestErrors++ }, fmt.Errorf("changes: %s changes: %w", k, err))
	}
	list, err := parse(body, k)
	if err != nil {
		return m.fail(ctx, func(s *Stats) { s.RequestErrors++ }, fmt.Errorf("changes: GET %s: %w", path, err))
	}
	slices.SortFunc(list, compareChanges)
	list = slices.Compact(list) // an entry listed twice is one change

	var delivered, skipped int
	saving := !m.dirty[k] // a store that just failed is not asked once per change
	defer func() {
		m.count(func(s *Stats) { s.AlreadyDelivered += uint64(skipped) })
		m.cfg.Logger.DebugContext(ctx, "changes: polled", "kind", k.String(), "listed", len(list),
			"delivered", delivered, "already_delivered", skipped)
	}()
	for _, c := range list {
		if m.delivered(c) {
			skipped++
			continue
		}
		if err := m.deliver(ctx, c); err != nil {
			return m.fail(ctx, func(s *Stats) { s.ListenerErrors++ }, fmt.Errorf("changes: %s: %w", c, err))
		}
		delivered++
		m.advance(c)
		if saving {
			saving = m.saveDetached(ctx, k) == nil
		} else {
			m.dirty[k] = true
		}
	}
	return nil
}

// path is the list's path, asked from a little before the cursor's time when there is
// one within reach: the API then lists only the changes since, where without it lists a
// whole day's.
func (m *Manager) path(k Kind, at time.Time) string {
	q := url.Values{}
	if !at.IsZero() && m.cfg.Clock.Since(at) <= reach {
		q.Set("afterDateTime", at.Add(-overlap).UTC().Format(time.RFC3339Nano))
	}
	if !m.cfg.Sport.IsZero() {
		q.Set("sportId", m.cfg.Sport.String())
	}
	p := "v1/sports/" + url.PathEscape(m.cfg.Language) + "/" + k.list() + "/changes.xml"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// parse reads a list that must be of kind k: a list of the other kind (a proxy or a
// mock answering the wrong path) would move the wrong cursor.
func parse(body []byte, k Kind) ([]Change, error) {
	list, err := ParseChanges(body)
	if err != nil {
		return nil, err
	}
	if len(list) > 0 && list[0].Kind != k {
		return nil, fmt.Errorf("changes: a list of %s changes where %s changes were asked for", list[0].Kind, k)
	}
	return list, nil
}

// deliver calls the listener, turning a panic into a *feed.ListenerError that matches
// feed.ErrListenerPanic.
func (m *Manager) deliver(ctx context.Context, c Change) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &feed.ListenerError{Method: "OnChange", Event: c.Event, Panic: p, Stack: debug.Stack()}
		}
	}()
	if err := m.listener.OnChange(ctx, c); err != nil {
		return &feed.ListenerError{Method: "OnChange", Event: c.Event, Err: err}
	}
	return nil
}

// fail counts err, reports it and returns it, unless ctx has ended: a poll cut short
// by the manager closing failed for no reason worth telling.
func (m *Manager) fail(ctx context.Context, count func(*Stats), err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	m.count(count)
	m.cfg.Logger.WarnContext(ctx, "changes: poll failed", "err", err)
	m.cfg.OnError(err)
	return err
}

func (m *Manager) count(f func(*Stats)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.stats)
}
