// Package lockstest checks implementations of locks.Store against what its contract in
// locks/store.go documents, so that MemoryStore and locks/pgstore are held to the same
// tests.
//
// The suite tests only what the contract promises. Its times are in UTC and truncated to
// microseconds, the precision of PostgreSQL's timestamptz, fixed rather than read from
// the clock, and compared as instants: an implementation may return them in another
// location. Sensor ids mix upper and lower case and digits, and the suite expects them
// listed in byte order ("0xA" < "A" < "a"): an SQL store must compare them in a byte-wise
// collation (in PostgreSQL, COLLATE "C").
package lockstest

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

// Run checks that a Store does what locks.Store documents. newStore returns a new, empty
// store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) locks.Store) {
	groups := []struct {
		name  string
		tests []subtest
	}{
		{"Registry", registryTests},
		{"Update", updateTests},
		{"History", historyTests},
		{"Outbox", outboxTests},
		{"Concurrency", concurrencyTests},
		{"Sequence", sequenceTests},
		{"Limits", limitTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					s := newStore(t)
					require.NotNil(t, s, "newStore returned nil")
					st.fn(&env{t: t, ctx: t.Context(), s: s})
				})
			}
		})
	}
}

// subtest is one check, run on a new store.
type subtest struct {
	name string
	fn   func(e *env)
}

// base is the time everything in the suite happens around: microseconds, UTC.
var base = time.Date(2025, 3, 1, 12, 0, 0, 123456000, time.UTC)

// at returns base plus n seconds.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// minutes is a RetryAfter: n minutes after attempt n.
func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }

// hours is a RetryAfter: n hours after attempt n.
func hours(n int) time.Duration { return time.Duration(n) * time.Hour }

// env is one subtest's store with helpers that fail the subtest on an unexpected error.
type env struct {
	t   *testing.T
	ctx context.Context
	s   locks.Store
}

// sensor registers a sensor with an address made from its id.
func (e *env) sensor(id locks.SensorID) locks.Sensor {
	e.t.Helper()
	s := locks.Sensor{ID: id, Address: "Svobody st. 23, room " + string(id)}
	require.NoError(e.t, e.s.CreateSensor(e.ctx, s), "CreateSensor(%q)", id)
	return s
}

// client registers a client named name and returns it with its ID.
func (e *env) client(name string) locks.Client {
	e.t.Helper()
	c, err := e.s.CreateClient(e.ctx, locks.Client{Name: name, URL: "https://" + name + ".example.com/hook"})
	require.NoError(e.t, err, "CreateClient(%q)", name)
	require.NotZero(e.t, c.ID, "CreateClient assigned no ID")
	require.Equal(e.t, name, c.Name)
	return c
}

// link links every client to the sensor.
func (e *env) link(sensor locks.SensorID, clients ...locks.Client) {
	e.t.Helper()
	for _, c := range clients {
		require.NoError(e.t, e.s.Link(e.ctx, sensor, c.ID), "Link(%q, %d)", sensor, c.ID)
	}
}

// update runs an Update of ids that writes eff, and returns how many notifications it
// created.
func (e *env) update(ids []locks.SensorID, eff locks.Effects) int {
	e.t.Helper()
	n, err := e.s.Update(e.ctx, ids, func(map[locks.SensorID]locks.Current) (locks.Effects, error) { return eff, nil })
	require.NoError(e.t, err, "Update(%q)", ids)
	return n
}

// change is a changed event of the sensor to state, at the sensor's time ts.
func change(sensor locks.SensorID, state locks.State, ts time.Time) locks.Change {
	return locks.Change{SensorID: sensor, Event: locks.EventChanged, State: state, At: ts}
}

// notify runs an Update at now that notifies the changes, locking their sensors, and
// returns the new notifications, by ID.
func (e *env) notify(now time.Time, changes ...locks.Change) []locks.Notification {
	e.t.Helper()
	before := map[locks.NotificationID]bool{}
	var ids []locks.SensorID
	for _, c := range changes {
		if !slices.Contains(ids, c.SensorID) {
			ids = append(ids, c.SensorID)
			for _, n := range e.notes(c.SensorID) {
				before[n.ID] = true
			}
		}
	}
	created := e.update(ids, locks.Effects{Notify: changes, Now: now})
	var out []locks.Notification
	for _, id := range ids {
		for _, n := range e.notes(id) {
			if !before[n.ID] {
				out = append(out, n)
			}
		}
	}
	require.Len(e.t, out, created, "Update returned %d created notifications, the sensors have %d new ones", created, len(out))
	slices.SortFunc(out, func(a, b locks.Notification) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// notes returns all the notifications of the sensor, in (At, ID) order, paging
// through them: no page size means "all".
func (e *env) notes(sensor locks.SensorID) []locks.Notification {
	e.t.Helper()
	return normNotes(pageThrough(e, func(after locks.Cursor) ([]locks.Notification, error) {
		return e.s.Notifications(e.ctx, sensor, locks.Range{After: after, Limit: locks.MaxLimit})
	}, func(n locks.Notification) locks.Cursor { return locks.Cursor{At: n.At, ID: int64(n.ID)} }))
}

// pageThrough pages through a list with pages of locks.MaxLimit, each after the cursor
// of the last entry of the one before, and returns all of it.
func pageThrough[T, C any](e *env, page func(after C) ([]T, error), cursor func(T) C) []T {
	e.t.Helper()
	var all []T
	var after C
	for {
		p, err := page(after)
		require.NoError(e.t, err, "a page after %v", after)
		all = append(all, p...)
		if len(p) < locks.MaxLimit {
			return all
		}
		after = cursor(p[len(p)-1])
	}
}

// note returns one notification with its attempts.
func (e *env) note(id locks.NotificationID) locks.Notification {
	e.t.Helper()
	n, err := e.s.Notification(e.ctx, id)
	require.NoError(e.t, err, "Notification(%d)", id)
	return normNote(n)
}

// readings returns the sensor's readings in r.
func (e *env) readings(sensor locks.SensorID, r locks.Range) []locks.StoredReading {
	e.t.Helper()
	rs, err := e.s.Readings(e.ctx, sensor, r)
	require.NoError(e.t, err, "Readings(%q, %+v)", sensor, r)
	return normReadings(rs)
}

// allReadings returns every reading of the sensor, paging through them.
func (e *env) allReadings(sensor locks.SensorID) []locks.StoredReading {
	e.t.Helper()
	return normReadings(pageThrough(e, func(after locks.Cursor) ([]locks.StoredReading, error) {
		return e.s.Readings(e.ctx, sensor, locks.Range{After: after, Limit: locks.MaxLimit})
	}, func(r locks.StoredReading) locks.Cursor { return locks.Cursor{At: r.At, ID: r.ID} }))
}

// current returns the sensor's state.
func (e *env) current(id locks.SensorID) locks.Current {
	e.t.Helper()
	c, err := e.s.Current(e.ctx, id)
	require.NoError(e.t, err, "Current(%q)", id)
	return normCurrent(c)
}

// deadLetters returns every dead letter, paging through them.
func (e *env) deadLetters() []locks.DeadLetter {
	e.t.Helper()
	return normLetters(pageThrough(e, func(after int64) ([]locks.DeadLetter, error) {
		return e.s.DeadLetters(e.ctx, after, locks.MaxLimit)
	}, func(d locks.DeadLetter) int64 { return d.ID }))
}

// deadNotes returns every dead notification, paging through them.
func (e *env) deadNotes() []locks.Notification {
	e.t.Helper()
	return normNotes(pageThrough(e, func(after locks.NotificationID) ([]locks.Notification, error) {
		return e.s.DeadNotifications(e.ctx, after, locks.MaxLimit)
	}, func(n locks.Notification) locks.NotificationID { return n.ID }))
}

// claim claims up to limit notifications at now, with up to 10 attempts spaced by
// minutes.
func (e *env) claim(now time.Time, limit int) []locks.Delivery {
	e.t.Helper()
	return e.claimWith(locks.ClaimRequest{Now: now, Limit: limit, MaxAttempts: 10, RetryAfter: minutes})
}

// claimWith runs Claim.
func (e *env) claimWith(req locks.ClaimRequest) []locks.Delivery {
	e.t.Helper()
	ds, err := e.s.Claim(e.ctx, req)
	require.NoError(e.t, err, "Claim at %v", req.Now)
	require.LessOrEqual(e.t, len(ds), req.Limit, "Claim returned more than its limit")
	return normDeliveries(ds)
}

// finish runs Finish.
func (e *env) finish(r locks.Result) {
	e.t.Helper()
	require.NoError(e.t, e.s.Finish(e.ctx, r), "Finish(%+v)", r)
}

// pending runs Pending, and NextDue, which must agree with it on the earliest due.
func (e *env) pending() (int, time.Time) {
	e.t.Helper()
	n, next, err := e.s.Pending(e.ctx)
	require.NoError(e.t, err)
	due, err := e.s.NextDue(e.ctx)
	require.NoError(e.t, err)
	require.True(e.t, due.Equal(next), "NextDue %v, Pending's earliest %v", due, next)
	return n, next.UTC()
}

// attempt is an attempt of the delivery that started at start and got code and errText.
func attempt(d locks.Delivery, start time.Time, code int, errText string) *locks.Attempt {
	return &locks.Attempt{Notification: d.ID, N: d.Attempts, At: start, Duration: 1500 * time.Millisecond,
		StatusCode: code, Error: errText}
}

// failed is the Result of the delivery's attempt that got a 503 at end: pending again.
func failed(d locks.Delivery, end time.Time) locks.Result {
	return locks.Result{Notification: d.ID, N: d.Attempts, At: end, Status: locks.Pending,
		Attempt: attempt(d, end.Add(-1500*time.Millisecond), 503, "503 Service Unavailable")}
}

// delivered is the Result of the delivery's attempt that got a 200 at end.
func delivered(d locks.Delivery, end time.Time) locks.Result {
	return locks.Result{Notification: d.ID, N: d.Attempts, At: end, Status: locks.Delivered,
		Attempt: attempt(d, end.Add(-1500*time.Millisecond), 200, "")}
}

// byID returns the delivery of each notification ID.
func byID(ds []locks.Delivery) map[locks.NotificationID]locks.Delivery {
	out := map[locks.NotificationID]locks.Delivery{}
	for _, d := range ds {
		out[d.ID] = d
	}
	return out
}

// noteIDs returns the IDs of the notifications, in their order.
func noteIDs(ns []locks.Notification) []locks.NotificationID {
	out := make([]locks.NotificationID, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

// deliveryIDs returns the IDs of the deliveries' notifications, in their order.
func deliveryIDs(ds []locks.Delivery) []locks.NotificationID {
	out := make([]locks.NotificationID, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// The norm functions return what a store returned with every time in UTC (so that
// times that are the same instant compare equal as values) and empty slices as nil.

func normTime(t time.Time) time.Time { return t.UTC() }

func normCurrent(c locks.Current) locks.Current {
	c.ReadingAt, c.ChangedAt, c.LastSeen = normTime(c.ReadingAt), normTime(c.ChangedAt), normTime(c.LastSeen)
	return c
}

func normCurrents(cs []locks.Current) []locks.Current {
	out := make([]locks.Current, len(cs))
	for i, c := range cs {
		out[i] = normCurrent(c)
	}
	return out
}

func normReadings(rs []locks.StoredReading) []locks.StoredReading {
	out := make([]locks.StoredReading, len(rs))
	for i, r := range rs {
		r.At, r.Received = normTime(r.At), normTime(r.Received)
		out[i] = r
	}
	return out
}

func normLetters(ds []locks.DeadLetter) []locks.DeadLetter {
	out := make([]locks.DeadLetter, len(ds))
	for i, d := range ds {
		d.Received = normTime(d.Received)
		out[i] = d
	}
	return out
}

func normNote(n locks.Notification) locks.Notification {
	n.At, n.Created, n.NextAttempt, n.Finished = normTime(n.At), normTime(n.Created), normTime(n.NextAttempt), normTime(n.Finished)
	n.ReadingAt = normTime(n.ReadingAt)
	if len(n.History) == 0 {
		n.History = nil
	} else {
		h := make([]locks.Attempt, len(n.History))
		for i, a := range n.History {
			a.At = normTime(a.At)
			h[i] = a
		}
		n.History = h
	}
	return n
}

func normNotes(ns []locks.Notification) []locks.Notification {
	out := make([]locks.Notification, len(ns))
	for i, n := range ns {
		out[i] = normNote(n)
	}
	return out
}

// normDeliveries also drops the deliveries' History, which Claim does not promise.
func normDeliveries(ds []locks.Delivery) []locks.Delivery {
	out := make([]locks.Delivery, len(ds))
	for i, d := range ds {
		d.Notification = normNote(d.Notification)
		d.History = nil
		out[i] = d
	}
	return out
}

// claimed is n as Claim at now returns it: one more attempt, due again after
// retryAfter.
func claimed(n locks.Notification, now time.Time, retryAfter func(int) time.Duration) locks.Notification {
	n.Attempts++
	n.NextAttempt = now.Add(retryAfter(n.Attempts))
	n.History = nil
	return n
}
