package lockstest

import (
	"fmt"
	"slices"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var historyTests = []subtest{
	{"ReadingsInRange", testReadingsRange},
	{"ReadingsPagedByCursor", testReadingsPaging},
	{"NotificationsInRange", testNotificationsRange},
	{"NotificationsPagedByCursor", testNotificationsPaging},
	{"NotificationsCarryTheirAttempts", testNotificationAttempts},
	{"DeadNotificationsPagedByID", testDeadNotifications},
	{"DeadLettersPagedByID", testDeadLetters},
}

// historyOffsets are the seconds after base of the history entries the Readings and
// Notifications tests add, in two Updates: out of order, and the second adds one at the
// time of one of the first, so that the two are ordered by ID.
var historyOffsets = [][]int{{5, 1, 3}, {3, 0, 7, 9}}

// historyRanges are cases of Range over the entries of historyOffsets, whose full list
// has the times 0, 1, 3, 3, 5, 7, 9; want selects the entries of the full list, by their
// index, that r selects; cursor, when not negative, is the index of the entry r.After
// names.
var historyRanges = []struct {
	name   string
	r      locks.Range
	cursor int
	want   func(full []int) []int
}{
	{"whole", locks.Range{}, -1, func(f []int) []int { return f }},
	{"From inclusive", locks.Range{From: at(3)}, -1, func(f []int) []int { return f[2:] }},
	{"To exclusive", locks.Range{To: at(5)}, -1, func(f []int) []int { return f[:4] }},
	{"From and To", locks.Range{From: at(1), To: at(7)}, -1, func(f []int) []int { return f[1:5] }},
	{"bounds between entries", locks.Range{From: at(2), To: at(6)}, -1, func(f []int) []int { return f[2:5] }},
	{"From equal to To", locks.Range{From: at(3), To: at(3)}, -1, func(f []int) []int { return nil }},
	{"To at the first", locks.Range{To: at(0)}, -1, func(f []int) []int { return nil }},
	{"From after the last", locks.Range{From: at(10)}, -1, func(f []int) []int { return nil }},
	{"Limit", locks.Range{Limit: 2}, -1, func(f []int) []int { return f[:2] }},
	{"Limit in a window", locks.Range{From: at(1), Limit: 3}, -1, func(f []int) []int { return f[1:4] }},
	{"cursor at the first of a tie", locks.Range{}, 2, func(f []int) []int { return f[3:] }},
	{"cursor at the second of a tie", locks.Range{}, 3, func(f []int) []int { return f[4:] }},
	{"cursor with a time of entries and ID 0", locks.Range{After: locks.Cursor{At: at(3)}}, -1, func(f []int) []int { return f[2:] }},
	{"cursor between entries", locks.Range{After: locks.Cursor{At: at(4)}}, -1, func(f []int) []int { return f[4:] }},
	{"cursor in a window", locks.Range{From: at(1), To: at(9)}, 3, func(f []int) []int { return f[4:6] }},
	{"cursor before From", locks.Range{From: at(5)}, 0, func(f []int) []int { return f[4:] }},
	{"cursor at the last", locks.Range{}, 6, func(f []int) []int { return nil }},
}

// selectIdx returns the entries of full at the indexes.
func selectIdx[T any](full []T, idx []int) []T {
	out := []T{}
	for _, i := range idx {
		out = append(out, full[i])
	}
	return out
}

// indexes returns 0 to n-1.
func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// pageAll pages through r with fetch, each page after the cursor of the last entry of
// the one before, and returns the pages that are not empty.
func pageAll[T any](e *env, fetch func(locks.Range) []T, cursor func(T) locks.Cursor, r locks.Range) [][]T {
	e.t.Helper()
	var pages [][]T
	for range 100 { // far more pages than any test has
		page := fetch(r)
		require.LessOrEqual(e.t, len(page), r.Limit, "page of %+v", r)
		if len(page) > 0 {
			pages = append(pages, page)
		}
		if len(page) < r.Limit {
			return pages
		}
		r.After = cursor(page[len(page)-1])
	}
	e.t.Fatalf("paging with limit %d did not come to an end", r.Limit)
	return nil
}

// addHistoryReadings adds the readings of historyOffsets to the sensor, and returns its
// readings as Readings lists them, checked.
func (e *env) addHistoryReadings(s locks.SensorID) []locks.StoredReading {
	e.t.Helper()
	var want []locks.StoredReading
	k := 0
	for _, batch := range historyOffsets {
		var rs []locks.StoredReading
		for _, off := range batch {
			rs = append(rs, locks.StoredReading{SensorID: s, State: locks.State(k % 2), At: at(off), Received: at(100 + k), Outcome: locks.Changed})
			k++
		}
		e.update([]locks.SensorID{s}, locks.Effects{Readings: rs, Now: at(100 + k)})
		want = append(want, rs...)
	}
	// By time, then by ID: the second Update's readings have the greater IDs.
	slices.SortStableFunc(want, func(a, b locks.StoredReading) int { return a.At.Compare(b.At) })
	full := e.allReadings(s)
	require.Equal(e.t, want, withoutIDs(full), "readings by (At, ID)")
	for i := 1; i < len(full); i++ {
		require.GreaterOrEqual(e.t, full[i].At, full[i-1].At)
		if full[i].At.Equal(full[i-1].At) {
			require.Greater(e.t, full[i].ID, full[i-1].ID, "readings of the same time by ID")
		}
	}
	return full
}

func readingCursor(r locks.StoredReading) locks.Cursor { return locks.Cursor{At: r.At, ID: r.ID} }

func testReadingsRange(e *env) {
	t := e.t
	s, other := e.sensor("s"), e.sensor("other")
	e.addHistoryReadings(other.ID)
	full := e.addHistoryReadings(s.ID)
	require.Len(t, full, 7)
	for _, c := range historyRanges {
		r := c.r
		if r.Limit == 0 {
			r.Limit = 100
		}
		if c.cursor >= 0 {
			r.After = readingCursor(full[c.cursor])
		}
		want := selectIdx(full, c.want(indexes(len(full))))
		assert.Equal(t, want, e.readings(s.ID, r), "%s: %+v", c.name, r)
	}
}

func testReadingsPaging(e *env) {
	t := e.t
	s, other := e.sensor("s"), e.sensor("other")
	e.addHistoryReadings(other.ID)
	full := e.addHistoryReadings(s.ID)
	require.True(t, full[2].At.Equal(full[3].At), "the suite's own data: pages of 3 split two readings of the same time")
	fetch := func(r locks.Range) []locks.StoredReading { return e.readings(s.ID, r) }

	pages := pageAll(e, fetch, readingCursor, locks.Range{Limit: 3})
	assert.Equal(t, [][]locks.StoredReading{full[:3], full[3:6], full[6:]}, pages, "pages of 3")
	for limit := 1; limit <= len(full)+1; limit++ {
		assert.Equal(t, full, slices.Concat(pageAll(e, fetch, readingCursor, locks.Range{Limit: limit})...), "pages of %d", limit)
		assert.Equal(t, full[1:6], slices.Concat(pageAll(e, fetch, readingCursor, locks.Range{From: at(1), To: at(9), Limit: limit})...),
			"pages of %d in a window", limit)
	}
}

// addHistoryNotes notifies the changes of historyOffsets to the sensor, linked to the
// client, and returns its notifications as Notifications lists them, checked.
func (e *env) addHistoryNotes(s locks.SensorID, c locks.ClientID) []locks.Notification {
	e.t.Helper()
	var want []locks.Notification
	k := 0
	for i, batch := range historyOffsets {
		now := at(100 + i)
		var changes []locks.Change
		for _, off := range batch {
			changes = append(changes, change(s, locks.State(k%2), at(off)))
			want = append(want, locks.Notification{SensorID: s, ClientID: c, Event: locks.EventChanged, State: locks.State(k % 2),
				At: at(off), Sequence: int64(k + 1), Created: now, Status: locks.Pending, NextAttempt: now})
			k++
		}
		e.update([]locks.SensorID{s}, locks.Effects{Notify: changes, Now: now})
	}
	slices.SortStableFunc(want, func(a, b locks.Notification) int { return a.At.Compare(b.At) })
	full := e.notes(s)
	got := slices.Clone(full)
	for i := range got {
		got[i].ID = 0
	}
	require.Equal(e.t, want, got, "notifications by (At, ID)")
	for i := 1; i < len(full); i++ {
		if full[i].At.Equal(full[i-1].At) {
			require.Greater(e.t, full[i].ID, full[i-1].ID, "notifications of the same time by ID")
		}
	}
	return full
}

func noteCursor(n locks.Notification) locks.Cursor { return locks.Cursor{At: n.At, ID: int64(n.ID)} }

func (e *env) notesIn(s locks.SensorID, r locks.Range) []locks.Notification {
	e.t.Helper()
	ns, err := e.s.Notifications(e.ctx, s, r)
	require.NoError(e.t, err, "Notifications(%q, %+v)", s, r)
	return normNotes(ns)
}

func testNotificationsRange(e *env) {
	t := e.t
	s, other := e.sensor("s"), e.sensor("other")
	c := e.client("alice")
	e.link(s.ID, c)
	e.link(other.ID, c)
	e.addHistoryNotes(other.ID, c.ID)
	full := e.addHistoryNotes(s.ID, c.ID)
	require.Len(t, full, 7)
	for _, tc := range historyRanges {
		r := tc.r
		if r.Limit == 0 {
			r.Limit = 100
		}
		if tc.cursor >= 0 {
			r.After = noteCursor(full[tc.cursor])
		}
		want := selectIdx(full, tc.want(indexes(len(full))))
		assert.Equal(t, want, e.notesIn(s.ID, r), "%s: %+v", tc.name, r)
	}
}

func testNotificationsPaging(e *env) {
	t := e.t
	s, other := e.sensor("s"), e.sensor("other")
	c := e.client("alice")
	e.link(s.ID, c)
	e.link(other.ID, c)
	e.addHistoryNotes(other.ID, c.ID)
	full := e.addHistoryNotes(s.ID, c.ID)
	require.True(t, full[2].At.Equal(full[3].At), "the suite's own data: pages of 3 split two notifications of the same time")
	fetch := func(r locks.Range) []locks.Notification { return e.notesIn(s.ID, r) }

	pages := pageAll(e, fetch, noteCursor, locks.Range{Limit: 3})
	assert.Equal(t, [][]locks.Notification{full[:3], full[3:6], full[6:]}, pages, "pages of 3")
	for limit := 1; limit <= len(full)+1; limit++ {
		assert.Equal(t, full, slices.Concat(pageAll(e, fetch, noteCursor, locks.Range{Limit: limit})...), "pages of %d", limit)
		assert.Equal(t, full[1:6], slices.Concat(pageAll(e, fetch, noteCursor, locks.Range{From: at(1), To: at(9), Limit: limit})...),
			"pages of %d in a window", limit)
	}
}

func testNotificationAttempts(e *env) {
	t := e.t
	s := e.sensor("s")
	c := e.client("alice")
	e.link(s.ID, c)
	n := e.notify(at(0), change(s.ID, 1, at(0)))[0]
	quiet := e.notify(at(1000), change(s.ID, 0, at(1)))[0] // due later than any claim here

	_, err := e.s.Notification(e.ctx, quiet.ID+1000)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Notification of an unknown ID")

	ds := e.claim(at(0), 10)
	require.Equal(t, []locks.NotificationID{n.ID}, deliveryIDs(ds))
	a1 := locks.Attempt{Notification: n.ID, N: 1, At: at(0), Duration: 1500 * time.Millisecond, StatusCode: 503, Error: "503 Service Unavailable"}
	e.finish(locks.Result{Notification: n.ID, N: 1, At: at(2), Attempt: &a1, Status: locks.Pending})

	ds = e.claim(at(60), 10)
	require.Equal(t, []locks.NotificationID{n.ID}, deliveryIDs(ds))
	require.Equal(t, 2, ds[0].Attempts)
	a2 := locks.Attempt{Notification: n.ID, N: 2, At: at(60), Duration: 10 * time.Second, Error: "context deadline exceeded"}
	e.finish(locks.Result{Notification: n.ID, N: 2, At: at(70), Attempt: &a2, Status: locks.Pending})

	ds = e.claim(at(180), 10)
	require.Equal(t, []locks.NotificationID{n.ID}, deliveryIDs(ds))
	require.Equal(t, 3, ds[0].Attempts)
	a3 := locks.Attempt{Notification: n.ID, N: 3, At: at(180), Duration: 250 * time.Millisecond, StatusCode: 204}
	e.finish(locks.Result{Notification: n.ID, N: 3, At: at(181), Attempt: &a3, Status: locks.Delivered})

	want := n
	want.Status, want.Attempts, want.NextAttempt = locks.Delivered, 3, at(180).Add(minutes(3))
	want.LastError, want.Finished = "context deadline exceeded", at(181)
	want.History = []locks.Attempt{a1, a2, a3}
	assert.Equal(t, want, e.note(n.ID), "Notification with its attempts, oldest first")
	assert.True(t, e.note(n.ID).History[2].Delivered())
	assert.Equal(t, []locks.Notification{want, quiet}, e.notes(s.ID), "Notifications with their attempts")
}

func testDeadNotifications(e *env) {
	t := e.t
	s := e.sensor("s")
	c := e.client("alice")
	e.link(s.ID, c)
	var changes []locks.Change
	for i := range 6 {
		changes = append(changes, change(s.ID, locks.State(i%2), at(i)))
	}
	ns := e.notify(at(0), changes...)
	require.Len(t, ns, 6)
	ds := byID(e.claim(at(0), 10))
	require.Len(t, ds, 6)
	var want []locks.Notification
	for i, n := range ns {
		d := ds[n.ID]
		switch i {
		case 1:
			e.finish(delivered(d, at(1)))
		case 4:
			e.finish(failed(d, at(1)))
		default:
			e.finish(locks.Result{Notification: n.ID, N: d.Attempts, At: at(1), Status: locks.Dead, Reason: fmt.Sprintf("gave up on %d", i),
				Attempt: attempt(d, at(0), 500, "500 Internal Server Error")})
			dead := e.note(n.ID)
			require.Equal(t, locks.Dead, dead.Status)
			require.Len(t, dead.History, 1)
			require.Equal(t, fmt.Sprintf("gave up on %d", i), dead.Reason)
			dead.History = nil
			want = append(want, dead)
		}
	}
	got, err := e.s.DeadNotifications(e.ctx, 0, 100)
	require.NoError(t, err)
	for _, g := range got {
		assert.Empty(t, g.History, "DeadNotifications returns notifications without their attempts")
	}
	assert.Equal(t, want, normNotes(got), "dead notifications, by ID")

	page := func(after locks.NotificationID, limit int) []locks.Notification {
		t.Helper()
		ns, err := e.s.DeadNotifications(e.ctx, after, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(ns), limit)
		return normNotes(ns)
	}
	assert.Equal(t, want[:3], page(0, 3))
	assert.Equal(t, want[3:], page(want[2].ID, 3))
	assert.Empty(t, page(want[3].ID, 3), "after the last")
	assert.Equal(t, want[1:3], page(ns[1].ID, 2), "after a notification that is not dead")
	for limit := 1; limit <= len(want)+1; limit++ {
		var all []locks.Notification
		var after locks.NotificationID
		for range 100 {
			p := page(after, limit)
			all = append(all, p...)
			if len(p) < limit {
				break
			}
			after = p[len(p)-1].ID
		}
		assert.Equal(t, want, all, "pages of %d", limit)
	}
}

func testDeadLetters(e *env) {
	t := e.t
	page := func(after int64, limit int) []locks.DeadLetter {
		t.Helper()
		ds, err := e.s.DeadLetters(e.ctx, after, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(ds), limit)
		return normLetters(ds)
	}
	assert.Empty(t, page(0, 10), "dead letters of an empty store")
	for i := range 5 {
		e.update(nil, locks.Effects{DeadLetters: []locks.DeadLetter{{Raw: fmt.Appendf(nil, `{"n": %d}`, i), Reason: fmt.Sprint("reason ", i), Received: at(i)}}, Now: at(i)})
	}
	all := page(0, 100)
	require.Len(t, all, 5)
	for i, d := range all {
		assert.Equal(t, fmt.Appendf(nil, `{"n": %d}`, i), d.Raw)
		if i > 0 {
			assert.Greater(t, d.ID, all[i-1].ID)
		}
	}
	assert.Equal(t, all[:2], page(0, 2))
	assert.Equal(t, all[2:4], page(all[1].ID, 2))
	assert.Equal(t, all[4:], page(all[3].ID, 2))
	assert.Empty(t, page(all[4].ID, 2), "after the last")
	for limit := 1; limit <= len(all)+1; limit++ {
		var got []locks.DeadLetter
		var after int64
		for range 100 {
			p := page(after, limit)
			got = append(got, p...)
			if len(p) < limit {
				break
			}
			after = p[len(p)-1].ID
		}
		assert.Equal(t, all, got, "pages of %d", limit)
	}
}
