package changes_test

import (
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/feedtest"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
)

// While the API is down, or answers with what is no list, the polls fail, are reported
// and counted, and deliver nothing; the first poll after it delivers what was missed,
// each change once.
func TestAPIOutage(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 5})
	rec := newRecorder(r.clock)
	m := r.manager(rec, changes.Config{OnError: rec.onError})
	r.publish(300)
	r.run(m)
	delivered := len(rec.changes())
	require.Positive(t, delivered)

	r.fault.Store(unavailable)
	r.publish(300)
	r.next(m, changes.DefaultInterval)
	assert.Len(t, rec.changes(), delivered, "nothing while the API is down")
	errs := rec.errors()
	require.Len(t, errs, 2, "one per list")
	for _, err := range errs {
		assert.ErrorIs(t, err, feed.ErrServerError)
		var apiErr *feed.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 503, apiErr.StatusCode)
	}
	assert.Contains(t, errs[0].Error(), "changes: fixture changes: ")
	assert.Contains(t, errs[1].Error(), "changes: result changes: ")

	r.fault.Store(garbage)
	r.publish(300)
	r.next(m, changes.DefaultInterval)
	assert.Len(t, rec.changes(), delivered)
	errs = rec.errors()[2:]
	require.Len(t, errs, 2)
	// The path asked for names the list, from its cursor if it has one.
	assert.Regexp(t, `^changes: GET v1/sports/en/fixtures/changes\.xml(\?afterDateTime=[^ ]+)?: changes: <html> is not a changes list`, errs[0].Error())
	assert.Regexp(t, `^changes: GET v1/sports/en/results/changes\.xml(\?afterDateTime=[^ ]+)?: changes: <html> is not a changes list`, errs[1].Error())

	r.fault.Store(healthy)
	r.next(m, changes.DefaultInterval)
	assert.Equal(t, once(r.published()), rec.counts(), "what was missed, once")
	assert.Len(t, rec.errors(), 4)
	st := m.Stats()
	assert.Equal(t, uint64(4), st.Polls)
	assert.Equal(t, uint64(8), st.Requests)
	assert.Equal(t, uint64(4), st.RequestErrors)
	assert.Equal(t, uint64(len(r.published())), st.Delivered)
}

// A listener that fails on a change holds its list there: the change is offered again
// at each poll, nothing after it is delivered meanwhile, the other list goes on; a panic
// is a failure too. Once the listener takes it, the rest follows, each change once.
func TestFailingListener(t *testing.T) {
	r := newRig(t, feedtest.SimulatorConfig{Seed: 6})
	rec := newRecorder(r.clock)
	m := r.manager(rec, changes.Config{OnError: rec.onError})
	r.publish(600)

	var fixtures []changes.Change
	for c := range r.published() {
		if c.Kind == changes.FixtureChange {
			fixtures = append(fixtures, c)
		}
	}
	slices.SortFunc(fixtures, func(a, b changes.Change) int {
		return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.Event.Prefix, b.Event.Prefix),
			cmp.Compare(a.Event.Type, b.Event.Type), cmp.Compare(a.Event.ID, b.Event.ID))
	})
	require.Greater(t, len(fixtures), 4)
	bad := fixtures[2] // the third in the order they are delivered
	var attempts atomic.Int32
	rec.failWith(func(c changes.Change) error {
		if c != bad {
			return nil
		}
		if attempts.Add(1) == 3 {
			panic("the listener's bug")
		}
		return errors.New("database down")
	})

	r.run(m)
	held := func() {
		t.Helper()
		var got []changes.Change
		for _, c := range rec.changes() {
			if c.Kind == changes.FixtureChange {
				got = append(got, c)
			}
		}
		assert.Equal(t, fixtures[:2], got, "the fixture list stops at the change not taken")
	}
	held()
	results := 0
	for _, c := range rec.changes() {
		if c.Kind == changes.ResultChange {
			results++
		}
	}
	assert.Positive(t, results, "the result list goes on")

	r.next(m, changes.DefaultInterval)
	held()
	r.next(m, changes.DefaultInterval)
	held()
	assert.Equal(t, int32(3), attempts.Load(), "offered at each poll")
	errs := rec.errors()
	require.Len(t, errs, 3)
	for i, err := range errs {
		assert.Contains(t, err.Error(), "changes: "+bad.String()+": feed: OnChange for "+bad.Event.String())
		var lerr *feed.ListenerError
		require.ErrorAs(t, err, &lerr)
		assert.Equal(t, bad.Event, lerr.Event)
		assert.Equal(t, i == 2, errors.Is(err, feed.ErrListenerPanic), "error %d: %v", i, err)
	}
	assert.Equal(t, uint64(3), m.Stats().ListenerErrors)

	rec.failWith(nil)
	r.publish(300)
	r.next(m, changes.DefaultInterval)
	assert.Equal(t, once(r.published()), rec.counts())
	var got []changes.Change
	for _, c := range rec.changes() {
		if c.Kind == changes.FixtureChange {
			got = append(got, c)
		}
	}
	assert.Equal(t, bad, got[2], "the change not taken came before those after it")
}

// flakyStore is a FileStore whose loads and saves fail while told to.
type flakyStore struct {
	*changes.FileStore
	failLoad, failSave atomic.Bool
}

func (s *flakyStore) Load(ctx context.Context) ([]changes.Cursor, error) {
	if s.failLoad.Load() {
		return nil, errors.New("disk unplugged")
	}
	return s.FileStore.Load(ctx)
}

func (s *flakyStore) Save(ctx context.Context, c changes.Cursor) error {
	if s.failSave.Load() {
		return errors.New("disk full")
	}
	return s.FileStore.Save(ctx, c)
}

// A store that cannot load holds the polls back (without the cursors every list would
// come again from its start); one that cannot save does not hold the deliveries back,
// is asked once per list and poll, and is caught up when it can save again, at the
// latest by Close.
func TestStoreFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.json")
	store := &flakyStore{FileStore: changes.NewFileStore(path)}
	r := newRig(t, feedtest.SimulatorConfig{Seed: 7})
	rec := newRecorder(r.clock)
	m := r.manager(rec, changes.Config{Store: store, OnError: rec.onError})
	r.publish(300)

	store.failLoad.Store(true)
	r.run(m)
	assert.Empty(t, rec.changes())
	require.Len(t, rec.errors(), 1)
	assert.EqualError(t, rec.errors()[0], "changes: loading the cursors: disk unplugged")
	assert.Equal(t, changes.Stats{Polls: 1, StoreErrors: 1}, m.Stats(), "no request without the cursors")

	store.failLoad.Store(false)
	store.failSave.Store(true)
	r.next(m, changes.DefaultInterval)
	assert.Equal(t, once(r.published()), rec.counts(), "delivered though the cursors cannot be saved")
	errs := rec.errors()[1:]
	require.Len(t, errs, 2, "one failed save per list, not one per change")
	assert.EqualError(t, errs[0], "changes: saving the fixture cursor: disk full")
	assert.EqualError(t, errs[1], "changes: saving the result cursor: disk full")
	assert.Empty(t, load(t, store.FileStore))

	r.publish(300)
	r.next(m, changes.DefaultInterval)
	assert.Len(t, rec.errors(), 5, "tried again at the poll's start, then once per list")
	assert.Error(t, m.Close(t.Context()), "Close saves, and says it could not")
	assert.Len(t, rec.errors(), 7)

	store.failSave.Store(false)
	require.NoError(t, m.Close(t.Context()), "Close again, the store back")
	assert.ElementsMatch(t, m.Cursors(), load(t, store.FileStore))
	assert.Equal(t, once(r.published()), rec.counts())

	// The next process takes over from the file, and delivers nothing twice.
	rec2 := newRecorder(r.clock)
	m2 := r.manager(rec2, changes.Config{Store: changes.NewFileStore(path)})
	r.run(m2)
	assert.Empty(t, rec2.changes())
	assert.Zero(t, m2.Stats().Delivered)
	assert.Positive(t, m2.Stats().AlreadyDelivered, "the cursors' seconds, listed again")
}
