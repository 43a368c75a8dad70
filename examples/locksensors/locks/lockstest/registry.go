package lockstest

import (
	"slices"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var registryTests = []subtest{
	{"SensorCreateGetUpdate", testSensorCreateGetUpdate},
	{"SensorNotFound", testSensorNotFound},
	{"ListSensorsInByteOrder", testListSensors},
	{"NewSensorHasNoState", testNewSensor},
	{"DeleteSensorForgetsEverything", testDeleteSensor},
	{"ClientCreateGetUpdateDelete", testClientCRUD},
	{"ListClientsInIDOrder", testListClients},
	{"LinkAndUnlink", testLinkUnlink},
	{"DeleteClientRemovesItsLinks", testDeleteClientLinks},
}

func testSensorCreateGetUpdate(e *env) {
	t := e.t
	s := locks.Sensor{ID: "xa7v9Dfadr7H", Address: "Moscow, Russia, Svobody st. 23 fl 1 room 16"}
	require.NoError(t, e.s.CreateSensor(e.ctx, s))
	got, err := e.s.GetSensor(e.ctx, s.ID)
	require.NoError(t, err)
	assert.Equal(t, s, got)

	err = e.s.CreateSensor(e.ctx, locks.Sensor{ID: s.ID, Address: "elsewhere"})
	require.ErrorIs(t, err, locks.ErrExists, "CreateSensor of a taken id")
	got, err = e.s.GetSensor(e.ctx, s.ID)
	require.NoError(t, err)
	assert.Equal(t, s, got, "a refused CreateSensor changed the sensor")

	// Ids are case-sensitive: one that differs only in case is another sensor.
	other := locks.Sensor{ID: "XA7V9DFADR7H", Address: "St Petersburg, Nevsky pr. 1"}
	require.NoError(t, e.s.CreateSensor(e.ctx, other))

	s.Address = "Kazan, Baumana st. 5"
	require.NoError(t, e.s.UpdateSensor(e.ctx, s))
	got, err = e.s.GetSensor(e.ctx, s.ID)
	require.NoError(t, err)
	assert.Equal(t, s, got, "after UpdateSensor")
	got, err = e.s.GetSensor(e.ctx, other.ID)
	require.NoError(t, err)
	assert.Equal(t, other, got, "UpdateSensor changed another sensor")
}

func testSensorNotFound(e *env) {
	t := e.t
	e.sensor("Known1")
	c := e.client("alice")
	for _, id := range []locks.SensorID{"Nosuch", "known1"} {
		_, err := e.s.GetSensor(e.ctx, id)
		assert.ErrorIs(t, err, locks.ErrNotFound, "GetSensor(%q)", id)
		err = e.s.UpdateSensor(e.ctx, locks.Sensor{ID: id, Address: "nowhere"})
		assert.ErrorIs(t, err, locks.ErrNotFound, "UpdateSensor(%q)", id)
		err = e.s.DeleteSensor(e.ctx, id)
		assert.ErrorIs(t, err, locks.ErrNotFound, "DeleteSensor(%q)", id)
		_, err = e.s.Current(e.ctx, id)
		assert.ErrorIs(t, err, locks.ErrNotFound, "Current(%q)", id)
		_, err = e.s.Clients(e.ctx, id)
		assert.ErrorIs(t, err, locks.ErrNotFound, "Clients(%q)", id)
		_, err = e.s.Readings(e.ctx, id, locks.Range{Limit: 10})
		assert.ErrorIs(t, err, locks.ErrNotFound, "Readings(%q)", id)
		_, err = e.s.Notifications(e.ctx, id, locks.Range{Limit: 10})
		assert.ErrorIs(t, err, locks.ErrNotFound, "Notifications(%q)", id)
		err = e.s.Link(e.ctx, id, c.ID)
		assert.ErrorIs(t, err, locks.ErrNotFound, "Link(%q, %d)", id, c.ID)
		err = e.s.Unlink(e.ctx, id, c.ID)
		assert.ErrorIs(t, err, locks.ErrNotFound, "Unlink(%q, %d)", id, c.ID)
	}
	all, err := e.s.ListSensors(e.ctx, "", 100)
	require.NoError(t, err)
	assert.Equal(t, []locks.SensorID{"Known1"}, sensorIDs(all), "the failed calls created a sensor")
}

// sensorIDs returns the ids of the sensors, in their order.
func sensorIDs(ss []locks.Sensor) []locks.SensorID {
	out := make([]locks.SensorID, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// listSensors pages through ListSensors from after with limit, checking the pages'
// sizes.
func (e *env) listSensors(after locks.SensorID, limit int) []locks.Sensor {
	e.t.Helper()
	var all []locks.Sensor
	for range 100 { // far more pages than any test has
		page, err := e.s.ListSensors(e.ctx, after, limit)
		require.NoError(e.t, err, "ListSensors(%q, %d)", after, limit)
		require.LessOrEqual(e.t, len(page), limit, "ListSensors(%q, %d)", after, limit)
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = page[len(page)-1].ID
	}
	e.t.Fatalf("ListSensors with limit %d did not come to an end", limit)
	return nil
}

func testListSensors(e *env) {
	t := e.t
	ids := []locks.SensorID{"a", "A", "0xA", "b", "B", "Z9", "0", "zz", "a0", "TestSensor", "testsensor", "0123456789aBcDeF"}
	sensors := map[locks.SensorID]locks.Sensor{}
	for _, id := range ids {
		sensors[id] = e.sensor(id)
	}
	want := []locks.SensorID{"0", "0123456789aBcDeF", "0xA", "A", "B", "TestSensor", "Z9", "a", "a0", "b", "testsensor", "zz"}
	require.ElementsMatch(t, ids, want, "the suite's own expectation")

	for _, limit := range []int{1, 2, 3, 5, len(ids), len(ids) + 1, 100} {
		got := e.listSensors("", limit)
		if assert.Equal(t, want, sensorIDs(got), "byte order, limit %d", limit) {
			for _, s := range got {
				assert.Equal(t, sensors[s.ID], s)
			}
		}
	}
	// After an id that is not registered, and after the last.
	got := e.listSensors("C", 3)
	assert.Equal(t, []locks.SensorID{"TestSensor", "Z9", "a", "a0", "b", "testsensor", "zz"}, sensorIDs(got), "after %q", "C")
	got = e.listSensors("a", 100)
	assert.Equal(t, []locks.SensorID{"a0", "b", "testsensor", "zz"}, sensorIDs(got), "after %q", "a")
	got = e.listSensors("zz", 100)
	assert.Empty(t, got, "after the last")

	require.NoError(t, e.s.DeleteSensor(e.ctx, "B"))
	got = e.listSensors("A", 2)
	assert.Equal(t, []locks.SensorID{"TestSensor", "Z9", "a", "a0", "b", "testsensor", "zz"}, sensorIDs(got), "after deleting B")
}

func testNewSensor(e *env) {
	t := e.t
	s := e.sensor("fresh")
	got := e.current(s.ID)
	assert.Equal(t, locks.Current{SensorID: s.ID}, got, "a new sensor's state")
	assert.False(t, got.Known)
	assert.True(t, got.ReadingAt.IsZero() && got.ChangedAt.IsZero() && got.LastSeen.IsZero(), "times of a new sensor: %+v", got)

	cs, err := e.s.Clients(e.ctx, s.ID)
	require.NoError(t, err)
	assert.Empty(t, cs)
	assert.Empty(t, e.allReadings(s.ID))
	assert.Empty(t, e.notes(s.ID))
	live, err := e.s.Liveness(e.ctx)
	require.NoError(t, err)
	assert.Empty(t, live, "a sensor that never sent a reading")
}

func testDeleteSensor(e *env) {
	t := e.t
	gone, kept := e.sensor("gone"), e.sensor("kept")
	c := e.client("alice")
	e.link(gone.ID, c)
	e.link(kept.ID, c)
	state := func(id locks.SensorID) locks.Current {
		return locks.Current{SensorID: id, Known: true, State: 1, ReadingAt: at(-1), ChangedAt: at(-1), LastSeen: at(0)}
	}
	reading := func(id locks.SensorID) locks.StoredReading {
		return locks.StoredReading{SensorID: id, State: 1, At: at(-1), Received: at(0), Outcome: locks.Changed}
	}
	e.update([]locks.SensorID{gone.ID, kept.ID}, locks.Effects{
		States:   []locks.Current{state(gone.ID), state(kept.ID)},
		Readings: []locks.StoredReading{reading(gone.ID), reading(kept.ID)},
		Now:      at(0),
	})
	goneNotes := e.notify(at(0), change(gone.ID, 1, at(-2)), change(gone.ID, 0, at(-1)))
	keptNotes := e.notify(at(0), change(kept.ID, 1, at(-1)))
	require.Len(t, goneNotes, 2)
	require.Len(t, keptNotes, 1)
	// One of gone's notifications dies; the other is claimed and left pending.
	ds := byID(e.claim(at(0), 10))
	require.Len(t, ds, 3)
	e.finish(locks.Result{Notification: goneNotes[0].ID, N: 1, At: at(1), Status: locks.Dead, Reason: "gave up",
		Attempt: attempt(ds[goneNotes[0].ID], at(0), 500, "500 Internal Server Error")})
	require.Len(t, e.deadNotes(), 1)

	require.NoError(t, e.s.DeleteSensor(e.ctx, gone.ID))

	_, err := e.s.GetSensor(e.ctx, gone.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "GetSensor after DeleteSensor")
	_, err = e.s.Current(e.ctx, gone.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Current after DeleteSensor")
	_, err = e.s.Readings(e.ctx, gone.ID, locks.Range{Limit: 10})
	assert.ErrorIs(t, err, locks.ErrNotFound, "Readings after DeleteSensor")
	_, err = e.s.Notifications(e.ctx, gone.ID, locks.Range{Limit: 10})
	assert.ErrorIs(t, err, locks.ErrNotFound, "Notifications after DeleteSensor")
	for _, n := range goneNotes {
		_, err = e.s.Notification(e.ctx, n.ID)
		assert.ErrorIs(t, err, locks.ErrNotFound, "Notification(%d) of a deleted sensor", n.ID)
	}
	err = e.s.Finish(e.ctx, delivered(ds[goneNotes[1].ID], at(2)))
	assert.ErrorIs(t, err, locks.ErrNotFound, "Finish of a notification of a deleted sensor")
	assert.Empty(t, e.deadNotes(), "a dead notification of a deleted sensor")
	n, next := e.pending()
	assert.Equal(t, 1, n, "pending notifications after DeleteSensor")
	assert.Equal(t, at(0).Add(minutes(1)), next)
	assert.Equal(t, noteIDs(keptNotes), deliveryIDs(e.claim(at(1000), 10)), "Claim after DeleteSensor")
	err = e.s.DeleteSensor(e.ctx, gone.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "DeleteSensor twice")
	err = e.s.Link(e.ctx, gone.ID, c.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Link to a deleted sensor")

	live, err := e.s.Liveness(e.ctx)
	require.NoError(t, err)
	keptState := state(kept.ID)
	keptState.Sequence = 1 // its one change
	assert.Equal(t, []locks.Current{keptState}, normCurrents(live), "Liveness after DeleteSensor")

	// The other sensor and the client are untouched.
	_, err = e.s.GetClient(e.ctx, c.ID)
	assert.NoError(t, err, "DeleteSensor deleted the linked client")
	cs, err := e.s.Clients(e.ctx, kept.ID)
	require.NoError(t, err)
	assert.Equal(t, []locks.Client{c}, cs)
	assert.Equal(t, keptState, e.current(kept.ID))
	assert.Len(t, e.allReadings(kept.ID), 1)
	assert.Equal(t, noteIDs(keptNotes), noteIDs(e.notes(kept.ID)))

	// The id registered again is a new sensor: no state (its events are counted from
	// the start again), links or history.
	e.sensor(gone.ID)
	assert.Equal(t, locks.Current{SensorID: gone.ID}, e.current(gone.ID), "state of a sensor registered again")
	cs, err = e.s.Clients(e.ctx, gone.ID)
	require.NoError(t, err)
	assert.Empty(t, cs, "links of a sensor registered again")
	assert.Empty(t, e.allReadings(gone.ID), "readings of a sensor registered again")
	assert.Empty(t, e.notes(gone.ID), "notifications of a sensor registered again")
	assert.Zero(t, e.update([]locks.SensorID{gone.ID}, locks.Effects{Notify: []locks.Change{change(gone.ID, 1, at(5))}, Now: at(5)}),
		"notified a client linked to the deleted sensor")
}

func testClientCRUD(e *env) {
	t := e.t
	in := locks.Client{Name: "Alice's alarms", URL: "https://alice.example.com/hook?x=1"}
	c1, err := e.s.CreateClient(e.ctx, in)
	require.NoError(t, err)
	assert.NotZero(t, c1.ID)
	assert.Equal(t, in.Name, c1.Name)
	assert.Equal(t, in.URL, c1.URL)
	c2 := e.client("bob")
	c3 := e.client("carol")
	assert.Greater(t, c2.ID, c1.ID, "client IDs increase")
	assert.Greater(t, c3.ID, c2.ID, "client IDs increase")

	for _, c := range []locks.Client{c1, c2, c3} {
		got, err := e.s.GetClient(e.ctx, c.ID)
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}

	c2.Name, c2.URL = "Bob (new)", "http://bob.example.org:8080/notify"
	require.NoError(t, e.s.UpdateClient(e.ctx, c2))
	got, err := e.s.GetClient(e.ctx, c2.ID)
	require.NoError(t, err)
	assert.Equal(t, c2, got, "after UpdateClient")
	got, err = e.s.GetClient(e.ctx, c1.ID)
	require.NoError(t, err)
	assert.Equal(t, c1, got, "UpdateClient changed another client")

	unknown := c3.ID + 1000
	_, err = e.s.GetClient(e.ctx, unknown)
	assert.ErrorIs(t, err, locks.ErrNotFound, "GetClient of an unknown ID")
	err = e.s.UpdateClient(e.ctx, locks.Client{ID: unknown, Name: "x", URL: "https://x.example.com"})
	assert.ErrorIs(t, err, locks.ErrNotFound, "UpdateClient of an unknown ID")
	err = e.s.DeleteClient(e.ctx, unknown)
	assert.ErrorIs(t, err, locks.ErrNotFound, "DeleteClient of an unknown ID")

	require.NoError(t, e.s.DeleteClient(e.ctx, c2.ID))
	_, err = e.s.GetClient(e.ctx, c2.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "GetClient after DeleteClient")
	err = e.s.UpdateClient(e.ctx, c2)
	assert.ErrorIs(t, err, locks.ErrNotFound, "UpdateClient after DeleteClient")
	err = e.s.DeleteClient(e.ctx, c2.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "DeleteClient twice")

	c4 := e.client("dave")
	assert.Greater(t, c4.ID, c3.ID, "client IDs increase")
}

// listClients pages through ListClients from after with limit, checking the pages'
// sizes.
func (e *env) listClients(after locks.ClientID, limit int) []locks.Client {
	e.t.Helper()
	var all []locks.Client
	for range 100 { // far more pages than any test has
		page, err := e.s.ListClients(e.ctx, after, limit)
		require.NoError(e.t, err, "ListClients(%d, %d)", after, limit)
		require.LessOrEqual(e.t, len(page), limit, "ListClients(%d, %d)", after, limit)
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
		after = page[len(page)-1].ID
	}
	e.t.Fatalf("ListClients with limit %d did not come to an end", limit)
	return nil
}

func testListClients(e *env) {
	t := e.t
	var cs []locks.Client
	for _, name := range []string{"zed", "amy", "kim", "bo", "lee"} {
		cs = append(cs, e.client(name))
	}
	require.NoError(t, e.s.DeleteClient(e.ctx, cs[2].ID))
	want := slices.Delete(slices.Clone(cs), 2, 3)

	for _, limit := range []int{1, 2, 3, 4, 5, 100} {
		assert.Equal(t, want, e.listClients(0, limit), "ID order, limit %d", limit)
	}
	page, err := e.s.ListClients(e.ctx, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, want[:2], page, "first page")
	page, err = e.s.ListClients(e.ctx, cs[1].ID, 2)
	require.NoError(t, err)
	assert.Equal(t, want[2:4], page, "a page after a deleted client")
	assert.Equal(t, want[2:], e.listClients(cs[2].ID, 1), "after the deleted client's ID")
	assert.Empty(t, e.listClients(cs[4].ID, 10), "after the last")
}

func testLinkUnlink(e *env) {
	t := e.t
	s, s2 := e.sensor("door"), e.sensor("window")
	c1, c2, c3 := e.client("alice"), e.client("bob"), e.client("carol")
	clients := func(id locks.SensorID) []locks.Client {
		t.Helper()
		cs, err := e.s.Clients(e.ctx, id)
		require.NoError(t, err, "Clients(%q)", id)
		return cs
	}

	e.link(s.ID, c3, c1)
	require.NoError(t, e.s.Link(e.ctx, s.ID, c1.ID), "linking twice")
	assert.Equal(t, []locks.Client{c1, c3}, clients(s.ID), "linked clients, by ID, each once")
	assert.Empty(t, clients(s2.ID), "clients of another sensor")

	err := e.s.Link(e.ctx, s.ID, c3.ID+1000)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Link to an unknown client")
	err = e.s.Link(e.ctx, "nosuch", c1.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Link of an unknown sensor")
	assert.Equal(t, []locks.Client{c1, c3}, clients(s.ID))

	// Clients are as they are now.
	c3.Name, c3.URL = "Carol (renamed)", "https://carol.example.net/hook"
	require.NoError(t, e.s.UpdateClient(e.ctx, c3))
	assert.Equal(t, []locks.Client{c1, c3}, clients(s.ID), "linked clients after UpdateClient")

	require.NoError(t, e.s.Unlink(e.ctx, s.ID, c3.ID))
	assert.Equal(t, []locks.Client{c1}, clients(s.ID), "after Unlink")
	err = e.s.Unlink(e.ctx, s.ID, c3.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Unlink twice")
	err = e.s.Unlink(e.ctx, s.ID, c2.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Unlink of a client never linked")
	err = e.s.Unlink(e.ctx, s2.ID, c1.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Unlink from a sensor the client is not linked to")
	err = e.s.Unlink(e.ctx, s.ID, c3.ID+1000)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Unlink of an unknown client")
	assert.Equal(t, []locks.Client{c1}, clients(s.ID))

	// The client still exists and links again.
	e.link(s.ID, c3, c2)
	e.link(s2.ID, c2)
	assert.Equal(t, []locks.Client{c1, c2, c3}, clients(s.ID), "linked again")
	assert.Equal(t, []locks.Client{c2}, clients(s2.ID))
}

func testDeleteClientLinks(e *env) {
	t := e.t
	s1, s2 := e.sensor("s1"), e.sensor("s2")
	c1, c2 := e.client("alice"), e.client("bob")
	e.link(s1.ID, c1, c2)
	e.link(s2.ID, c1, c2)

	require.NoError(t, e.s.DeleteClient(e.ctx, c1.ID))
	for _, s := range []locks.SensorID{s1.ID, s2.ID} {
		cs, err := e.s.Clients(e.ctx, s)
		require.NoError(t, err)
		assert.Equal(t, []locks.Client{c2}, cs, "clients of %q after DeleteClient", s)
	}
	err := e.s.Unlink(e.ctx, s1.ID, c1.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Unlink of a deleted client")
	err = e.s.Link(e.ctx, s1.ID, c1.ID)
	assert.ErrorIs(t, err, locks.ErrNotFound, "Link of a deleted client")

	ns := e.notify(at(0), change(s1.ID, 1, at(0)))
	if assert.Len(t, ns, 1, "notifications after DeleteClient") {
		assert.Equal(t, c2.ID, ns[0].ClientID)
	}
}
