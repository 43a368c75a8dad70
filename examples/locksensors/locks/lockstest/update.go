package lockstest

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var updateTests = []subtest{
	{"LocksOnlyRegisteredSensors", testUpdateLocks},
	{"WritesStates", testUpdateStates},
	{"AddsReadings", testUpdateReadings},
	{"AddsDeadLettersByteForByte", testUpdateDeadLetters},
	{"NotifiesLinkedClients", testUpdateNotify},
	{"CancelsPendingNotifications", testUpdateCancel},
	{"FnErrorWritesNothing", testUpdateFnError},
	{"StateOfUnlockedSensorWritesNothing", testUpdateUnlocked},
	{"CancelledContextWritesNothing", testUpdateCancelledContext},
	{"Liveness", testLiveness},
}

// snapshot is everything an Update may write about some sensors.
type snapshot struct {
	Currents map[locks.SensorID]locks.Current
	Readings map[locks.SensorID][]locks.StoredReading
	Notes    map[locks.SensorID][]locks.Notification
	Letters  []locks.DeadLetter
	Pending  int
	Next     time.Time
}

func (e *env) snapshot(ids ...locks.SensorID) snapshot {
	e.t.Helper()
	s := snapshot{Currents: map[locks.SensorID]locks.Current{}, Readings: map[locks.SensorID][]locks.StoredReading{},
		Notes: map[locks.SensorID][]locks.Notification{}, Letters: e.deadLetters()}
	for _, id := range ids {
		s.Currents[id] = e.current(id)
		s.Readings[id] = e.allReadings(id)
		s.Notes[id] = e.notes(id)
	}
	s.Pending, s.Next = e.pending()
	return s
}

// everything is Effects that write something of every kind about sensor, at now.
func everything(sensor locks.SensorID, now time.Time) locks.Effects {
	return locks.Effects{
		States:      []locks.Current{{SensorID: sensor, Known: true, State: 1, ReadingAt: now, ChangedAt: now, LastSeen: now}},
		Readings:    []locks.StoredReading{{SensorID: sensor, State: 1, At: now, Received: now, Outcome: locks.Changed}},
		DeadLetters: []locks.DeadLetter{{Raw: []byte(`{"data": 7}`), Reason: "sensor_id: missing", Received: now}},
		Cancel:      []locks.SensorID{sensor},
		Notify:      []locks.Change{change(sensor, 1, now)},
		Now:         now,
	}
}

func testUpdateLocks(e *env) {
	t := e.t
	a, b := e.sensor("a"), e.sensor("b")
	stA := locks.Current{SensorID: a.ID, Known: true, State: 1, ReadingAt: at(-10), ChangedAt: at(-20), LastSeen: at(0), Lost: true}
	assert.Zero(t, e.update([]locks.SensorID{a.ID}, locks.Effects{States: []locks.Current{stA}, Now: at(0)}))

	calls := 0
	var seen map[locks.SensorID]locks.Current
	n, err := e.s.Update(e.ctx, []locks.SensorID{a.ID, "nosuch", b.ID}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		calls++
		seen = maps.Clone(cur)
		return locks.Effects{Now: at(1)}, nil
	})
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, 1, calls, "calls of fn")
	for id, c := range seen {
		seen[id] = normCurrent(c)
	}
	assert.Equal(t, map[locks.SensorID]locks.Current{a.ID: stA, b.ID: {SensorID: b.ID}}, seen,
		"fn gets the registered sensors, one never read with Known false, and skips the unknown")

	calls = 0
	n, err = e.s.Update(e.ctx, nil, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		calls++
		assert.Empty(t, cur, "fn of an Update of no sensors")
		return locks.Effects{Now: at(2)}, nil
	})
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, 1, calls, "calls of fn")
}

func testUpdateStates(e *env) {
	t := e.t
	a, b := e.sensor("a"), e.sensor("b")
	stA := locks.Current{SensorID: a.ID, Known: true, State: 0, ReadingAt: at(1), ChangedAt: at(1), LastSeen: at(2)}
	stB := locks.Current{SensorID: b.ID, Known: true, State: 1, ReadingAt: at(-3), ChangedAt: at(-30), LastSeen: at(-2), Lost: true}
	e.update([]locks.SensorID{a.ID, b.ID}, locks.Effects{States: []locks.Current{stA, stB}, Now: at(2)})
	assert.Equal(t, stA, e.current(a.ID))
	assert.Equal(t, stB, e.current(b.ID))

	stA = locks.Current{SensorID: a.ID, Known: true, State: 1, ReadingAt: at(5), ChangedAt: at(5), LastSeen: at(6)}
	e.update([]locks.SensorID{a.ID, b.ID}, locks.Effects{States: []locks.Current{stA}, Now: at(6)})
	assert.Equal(t, stA, e.current(a.ID), "replaced state")
	assert.Equal(t, stB, e.current(b.ID), "an Update that did not write a locked sensor's state changed it")

	_, err := e.s.Update(e.ctx, []locks.SensorID{b.ID, a.ID}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		assert.Equal(t, stA, normCurrent(cur[a.ID]), "fn sees what the last Update wrote")
		assert.Equal(t, stB, normCurrent(cur[b.ID]), "fn sees what the last Update wrote")
		return locks.Effects{Now: at(7)}, nil
	})
	require.NoError(t, err)
}

// withoutIDs returns the readings with their IDs zeroed.
func withoutIDs(rs []locks.StoredReading) []locks.StoredReading {
	out := slices.Clone(rs)
	for i := range out {
		out[i].ID = 0
	}
	return out
}

func testUpdateReadings(e *env) {
	t := e.t
	a, b := e.sensor("a"), e.sensor("b")
	r1 := locks.StoredReading{SensorID: a.ID, State: 1, At: at(1), Received: at(2), Outcome: locks.Changed}
	r2 := locks.StoredReading{SensorID: a.ID, State: 1, At: at(3), Received: at(4), Outcome: locks.Same}
	r3 := locks.StoredReading{SensorID: b.ID, State: 0, At: at(1), Received: at(2), Outcome: locks.Changed}
	assert.Zero(t, e.update([]locks.SensorID{a.ID, b.ID}, locks.Effects{Readings: []locks.StoredReading{r1, r2, r3}, Now: at(4)}))

	ga, gb := e.allReadings(a.ID), e.allReadings(b.ID)
	assert.Equal(t, []locks.StoredReading{r1, r2}, withoutIDs(ga))
	assert.Equal(t, []locks.StoredReading{r3}, withoutIDs(gb))
	ids := map[int64]bool{}
	var last int64
	for _, r := range append(ga, gb...) {
		assert.Positive(t, r.ID, "reading ID")
		assert.False(t, ids[r.ID], "reading ID %d given twice", r.ID)
		ids[r.ID] = true
		last = max(last, r.ID)
	}

	// An older reading (by ts) added later comes first, with a greater ID.
	r4 := locks.StoredReading{SensorID: a.ID, State: 0, At: at(0), Received: at(6), Outcome: locks.Stale}
	e.update([]locks.SensorID{a.ID}, locks.Effects{Readings: []locks.StoredReading{r4}, Now: at(6)})
	ga = e.allReadings(a.ID)
	assert.Equal(t, []locks.StoredReading{r4, r1, r2}, withoutIDs(ga))
	if assert.Len(t, ga, 3) {
		assert.Greater(t, ga[0].ID, last, "IDs increase")
	}
	assert.Equal(t, []locks.StoredReading{r3}, withoutIDs(e.allReadings(b.ID)))
}

func testUpdateDeadLetters(e *env) {
	t := e.t
	raws := [][]byte{
		[]byte(`{"sensor_id": "xa7v9Dfadr7H", "data": 2, "ts": 1764000000}`),
		{0xff, 0xfe, 'a', 0x00, 0xc3, 0x28, '\n', 0x80}, // not UTF-8, with a NUL
		[]byte("\xe2\x82"), // a cut rune
		[]byte("не JSON — plain text\r\n"),
	}
	reasons := []string{"data: 2 is not 0 or 1", "body: not a JSON object", "body: not a JSON object: unexpected EOF", "body: невалидно"}
	for i, raw := range raws {
		in := slices.Clone(raw)
		e.update(nil, locks.Effects{DeadLetters: []locks.DeadLetter{{Raw: in, Reason: reasons[i], Received: at(i)}}, Now: at(i)})
		in[0] ^= 0xff // the caller reuses its buffer: what was committed must not change
	}
	got := e.deadLetters()
	require.Len(t, got, len(raws))
	var last int64
	for i, d := range got {
		assert.Equal(t, raws[i], d.Raw, "dead letter %d: raw bytes", i)
		assert.Equal(t, reasons[i], d.Reason, "dead letter %d", i)
		assert.Equal(t, at(i), d.Received, "dead letter %d", i)
		assert.Greater(t, d.ID, last, "dead letter IDs increase")
		last = d.ID
	}
	assert.False(t, utf8.Valid(got[1].Raw))

	// Two in one Update, with a sensor's reading.
	s := e.sensor("s")
	more := []locks.DeadLetter{{Raw: []byte("x"), Reason: "one", Received: at(10)}, {Raw: []byte{0xc0, 0xaf}, Reason: "two", Received: at(11)}}
	e.update([]locks.SensorID{s.ID}, locks.Effects{DeadLetters: more, Readings: []locks.StoredReading{
		{SensorID: s.ID, State: 1, At: at(10), Received: at(10), Outcome: locks.Changed}}, Now: at(11)})
	got = e.deadLetters()
	require.Len(t, got, len(raws)+2)
	added := got[len(raws):]
	assert.Greater(t, added[0].ID, last)
	assert.Greater(t, added[1].ID, added[0].ID)
	slices.SortFunc(added, func(a, b locks.DeadLetter) int { return cmp.Compare(a.Reason, b.Reason) })
	for i := range added {
		added[i].ID = 0
	}
	assert.Equal(t, more, added)
}

func testUpdateNotify(e *env) {
	t := e.t
	s, lonely := e.sensor("door"), e.sensor("lonely")
	c1, c2 := e.client("alice"), e.client("bob")
	e.client("carol") // linked to nothing
	e.link(s.ID, c2, c1)

	n := e.update([]locks.SensorID{s.ID, lonely.ID}, locks.Effects{
		Notify: []locks.Change{change(s.ID, 1, at(-1)), change(lonely.ID, 1, at(-1))},
		Now:    at(0),
	})
	assert.Equal(t, 2, n, "notifications created: one per client linked")
	got := e.notes(s.ID)
	require.Len(t, got, 2)
	assert.ElementsMatch(t, []locks.ClientID{c1.ID, c2.ID}, []locks.ClientID{got[0].ClientID, got[1].ClientID})
	assert.NotEqual(t, got[0].ID, got[1].ID)
	for _, g := range got {
		assert.Positive(t, g.ID)
		assert.Equal(t, locks.Notification{ID: g.ID, SensorID: s.ID, ClientID: g.ClientID, Event: locks.EventChanged, State: 1,
			At: at(-1), Sequence: 1, Created: at(0), Status: locks.Pending, Attempts: 0, NextAttempt: at(0)}, g)
		assert.Equal(t, g, e.note(g.ID), "Notification(%d)", g.ID)
	}
	assert.Empty(t, e.notes(lonely.ID), "notifications of a sensor linked to no client")
	pn, next := e.pending()
	assert.Equal(t, 2, pn)
	assert.Equal(t, at(0), next)

	// Two changes in one Update: one notification per change and client.
	n = e.update([]locks.SensorID{s.ID}, locks.Effects{
		Notify: []locks.Change{
			{SensorID: s.ID, Event: locks.EventLost, State: 1, At: at(10)},
			{SensorID: s.ID, Event: locks.EventRestored, State: 1, At: at(11)},
		},
		Now: at(12),
	})
	assert.Equal(t, 4, n)
	all := e.notes(s.ID)
	require.Len(t, all, 6)
	assert.Equal(t, got, all[:2], "the first notifications changed")
	var events []locks.Event
	var seqs []int64
	for _, g := range all[2:] {
		events = append(events, g.Event)
		seqs = append(seqs, g.Sequence)
		assert.Greater(t, g.ID, max(got[0].ID, got[1].ID), "notification IDs increase")
		assert.Equal(t, at(12), g.Created)
		assert.Equal(t, at(12), g.NextAttempt)
		assert.Equal(t, locks.Pending, g.Status)
		assert.Zero(t, g.Attempts)
	}
	assert.Equal(t, []locks.Event{locks.EventLost, locks.EventLost, locks.EventRestored, locks.EventRestored}, events)
	assert.Equal(t, []int64{2, 2, 3, 3}, seqs, "the sensor's second and third events")
	pn, next = e.pending()
	assert.Equal(t, 6, pn)
	assert.Equal(t, at(0), next)
}

func testUpdateCancel(e *env) {
	t := e.t
	a, b := e.sensor("a"), e.sensor("b")
	c := e.client("alice")
	e.link(a.ID, c)
	e.link(b.ID, c)
	an := e.notify(at(0), change(a.ID, 1, at(-3)), change(a.ID, 0, at(-2)), change(a.ID, 1, at(-1)))
	bn := e.notify(at(0), change(b.ID, 1, at(-1)))
	require.Len(t, an, 3)
	require.Len(t, bn, 1)
	ds := byID(e.claim(at(0), 10))
	require.Len(t, ds, 4)
	e.finish(delivered(ds[an[0].ID], at(1)))
	e.finish(locks.Result{Notification: an[1].ID, N: 1, At: at(1), Status: locks.Dead, Reason: "gave up",
		Attempt: attempt(ds[an[1].ID], at(0), 410, "410 Gone")})
	e.finish(failed(ds[an[2].ID], at(1)))
	e.finish(failed(ds[bn[0].ID], at(1)))
	a4 := e.notify(at(5), change(a.ID, 0, at(4)))
	require.Len(t, a4, 1)
	assert.Equal(t, locks.Pending, e.note(an[2].ID).Status, "an Update without Cancel cancelled")

	untouched := []locks.Notification{e.note(an[0].ID), e.note(an[1].ID), e.note(bn[0].ID)}
	require.Equal(t, []locks.Status{locks.Delivered, locks.Dead, locks.Pending},
		[]locks.Status{untouched[0].Status, untouched[1].Status, untouched[2].Status}, "the suite's own setup")

	n := e.update([]locks.SensorID{a.ID}, locks.Effects{Cancel: []locks.SensorID{a.ID}, Notify: []locks.Change{change(a.ID, 1, at(9))}, Now: at(10)})
	assert.Equal(t, 1, n)
	for _, id := range []locks.NotificationID{an[2].ID, a4[0].ID} {
		got := e.note(id)
		assert.Equal(t, locks.Cancelled, got.Status, "pending notification %d of a cancelled sensor", id)
		assert.Equal(t, "superseded", got.Reason, "notification %d", id)
		assert.Equal(t, at(10), got.Finished, "notification %d", id)
	}
	for _, want := range untouched {
		assert.Equal(t, want, e.note(want.ID), "Cancel changed a notification not pending or of another sensor")
	}
	all := e.notes(a.ID)
	require.Len(t, all, 5)
	newest := all[4]
	assert.Equal(t, locks.Notification{ID: newest.ID, SensorID: a.ID, ClientID: c.ID, Event: locks.EventChanged, State: 1,
		At: at(9), Sequence: 5, Created: at(10), Status: locks.Pending, NextAttempt: at(10)}, newest, "the notification created after Cancel")
	pn, next := e.pending()
	assert.Equal(t, 2, pn)
	assert.Equal(t, at(10), next)

	// Cancel alone, of another sensor.
	assert.Zero(t, e.update([]locks.SensorID{b.ID}, locks.Effects{Cancel: []locks.SensorID{b.ID}, Now: at(20)}))
	got := e.note(bn[0].ID)
	assert.Equal(t, locks.Cancelled, got.Status)
	assert.Equal(t, "superseded", got.Reason)
	assert.Equal(t, at(20), got.Finished)
	assert.Equal(t, locks.Pending, e.note(newest.ID).Status, "Cancel of one sensor cancelled another's")
	pn, next = e.pending()
	assert.Equal(t, 1, pn)
	assert.Equal(t, at(10), next)
}

func testUpdateFnError(e *env) {
	t := e.t
	a := e.sensor("a")
	c := e.client("alice")
	e.link(a.ID, c)
	e.update([]locks.SensorID{a.ID}, locks.Effects{
		States: []locks.Current{{SensorID: a.ID, Known: true, State: 0, ReadingAt: at(0), ChangedAt: at(0), LastSeen: at(0)}},
		Now:    at(0),
	})
	e.notify(at(0), change(a.ID, 0, at(0)))
	before := e.snapshot(a.ID)

	boom := errors.New("boom")
	n, err := e.s.Update(e.ctx, []locks.SensorID{a.ID}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return everything(a.ID, at(5)), boom
	})
	assert.ErrorIs(t, err, boom, "Update returns fn's error")
	assert.Zero(t, n)
	assert.Equal(t, before, e.snapshot(a.ID), "an Update whose fn failed wrote something")
}

func testUpdateUnlocked(e *env) {
	t := e.t
	a, b := e.sensor("a"), e.sensor("b")
	c := e.client("alice")
	e.link(a.ID, c)
	e.link(b.ID, c)
	e.update([]locks.SensorID{b.ID}, locks.Effects{
		States: []locks.Current{{SensorID: b.ID, Known: true, State: 0, ReadingAt: at(0), ChangedAt: at(0), LastSeen: at(0)}},
		Now:    at(0),
	})
	before := e.snapshot(a.ID, b.ID)

	eff := everything(a.ID, at(5))
	eff.States = append(eff.States, locks.Current{SensorID: b.ID, Known: true, State: 1, ReadingAt: at(5), ChangedAt: at(5), LastSeen: at(5)})
	n, err := e.s.Update(e.ctx, []locks.SensorID{a.ID}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) { return eff, nil })
	assert.Error(t, err, "an Update wrote the state of a sensor it did not lock")
	assert.Zero(t, n)
	assert.Equal(t, before, e.snapshot(a.ID, b.ID), "a refused Update wrote something")

	// An unknown id is skipped, so not locked either.
	eff = everything(a.ID, at(6))
	eff.States = []locks.Current{{SensorID: "nosuch", Known: true, State: 1, ReadingAt: at(6), ChangedAt: at(6), LastSeen: at(6)}}
	n, err = e.s.Update(e.ctx, []locks.SensorID{a.ID, "nosuch"}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) { return eff, nil })
	assert.Error(t, err, "an Update wrote the state of an unknown sensor")
	assert.Zero(t, n)
	assert.Equal(t, before, e.snapshot(a.ID, b.ID), "a refused Update wrote something")
	_, err = e.s.GetSensor(e.ctx, "nosuch")
	assert.ErrorIs(t, err, locks.ErrNotFound, "a refused Update created a sensor")
}

func testUpdateCancelledContext(e *env) {
	t := e.t
	a := e.sensor("a")
	c := e.client("alice")
	e.link(a.ID, c)
	e.notify(at(0), change(a.ID, 0, at(0)))
	before := e.snapshot(a.ID)

	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	n, err := e.s.Update(ctx, []locks.SensorID{a.ID}, func(map[locks.SensorID]locks.Current) (locks.Effects, error) {
		return everything(a.ID, at(5)), nil
	})
	assert.Error(t, err, "Update with a cancelled context")
	assert.Zero(t, n)
	assert.Equal(t, before, e.snapshot(a.ID), "an Update with a cancelled context wrote something")
}

func testLiveness(e *env) {
	t := e.t
	liveness := func() []locks.Current {
		t.Helper()
		cs, err := e.s.Liveness(e.ctx)
		require.NoError(t, err)
		cs = normCurrents(cs)
		slices.SortFunc(cs, func(a, b locks.Current) int { return cmp.Compare(a.SensorID, b.SensorID) })
		return cs
	}
	assert.Empty(t, liveness(), "Liveness of an empty store")
	e.sensor("never")
	seen, lost := e.sensor("seen"), e.sensor("lost")
	assert.Empty(t, liveness(), "Liveness of sensors that never sent a reading")

	stSeen := locks.Current{SensorID: seen.ID, Known: true, State: 1, ReadingAt: at(-5), ChangedAt: at(-9), LastSeen: at(1)}
	stLost := locks.Current{SensorID: lost.ID, Known: true, State: 0, ReadingAt: at(-50), ChangedAt: at(-60), LastSeen: at(-40), Lost: true}
	e.update([]locks.SensorID{seen.ID, lost.ID}, locks.Effects{States: []locks.Current{stSeen, stLost}, Now: at(1)})
	assert.Equal(t, []locks.Current{stLost, stSeen}, liveness())

	stBack := stLost
	stBack.Lost, stBack.LastSeen = false, at(2)
	e.update([]locks.SensorID{lost.ID}, locks.Effects{States: []locks.Current{stBack}, Now: at(2)})
	assert.Equal(t, []locks.Current{stBack, stSeen}, liveness(), "after a lost sensor came back")
}
