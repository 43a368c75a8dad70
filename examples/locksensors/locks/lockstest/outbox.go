package lockstest

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var outboxTests = []subtest{
	{"ClaimTakesDueOldestFirst", testClaimDue},
	{"ClaimLimit", testClaimLimit},
	{"ClaimGivesUpAtMaxAttempts", testClaimMaxAttempts},
	{"ClaimReadsSensorAndClientNow", testClaimDelivery},
	{"FinishSetsStatus", testFinishStatuses},
	{"FinishOfStaleAttemptOnlyRecordsIt", testFinishStale},
	{"Replay", testReplay},
	{"Pending", testPending},
}

func testClaimDue(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	// Created in another order than they are due.
	nX := e.notify(at(20), change(s.ID, 1, at(20)))[0]
	nA := e.notify(at(0), change(s.ID, 0, at(0)))[0]
	nB := e.notify(at(10), change(s.ID, 1, at(10)))[0]
	req := func(now time.Time) locks.ClaimRequest {
		return locks.ClaimRequest{Now: now, Limit: 10, MaxAttempts: 5, RetryAfter: hours}
	}

	got := e.claimWith(req(at(15)))
	assert.Equal(t, []locks.Delivery{
		{Notification: claimed(nA, at(15), hours), Address: s.Address, Client: c, Linked: true},
		{Notification: claimed(nB, at(15), hours), Address: s.Address, Client: c, Linked: true},
	}, got, "the notifications due, oldest due first, each with its attempt counted and its next one an hour on")
	assert.Equal(t, claimed(nA, at(15), hours), e.note(nA.ID), "a claimed notification")
	assert.Equal(t, nX, e.note(nX.ID), "a notification not due was changed")

	assert.Empty(t, e.claimWith(req(at(15))), "claimed again before its next attempt")
	assert.Empty(t, e.claimWith(req(at(20).Add(-time.Microsecond))), "claimed before it is due")
	got = e.claimWith(req(at(20)))
	assert.Equal(t, []locks.NotificationID{nX.ID}, deliveryIDs(got), "due at the time of the claim")
	assert.Empty(t, e.claimWith(req(at(15).Add(time.Hour-time.Microsecond))), "claimed again before its next attempt")

	again := at(15).Add(time.Hour)
	got = e.claimWith(req(again))
	assert.ElementsMatch(t, []locks.Delivery{
		{Notification: claimed(claimed(nA, at(15), hours), again, hours), Address: s.Address, Client: c, Linked: true},
		{Notification: claimed(claimed(nB, at(15), hours), again, hours), Address: s.Address, Client: c, Linked: true},
	}, got, "the second attempts, due two hours after the claim")
	for _, d := range got {
		assert.Equal(t, 2, d.Attempts)
		assert.Equal(t, again.Add(2*time.Hour), d.NextAttempt)
	}
}

func testClaimLimit(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	ns := make([]locks.Notification, 5)
	for i := 4; i >= 0; i-- { // IDs decrease as due times increase
		ns[i] = e.notify(at(i), change(s.ID, locks.State(i%2), at(i)))[0]
	}
	for _, want := range [][]int{{0, 1}, {2, 3}, {4}, {}} {
		got := e.claim(at(10), 2)
		wantIDs := []locks.NotificationID{}
		for _, i := range want {
			wantIDs = append(wantIDs, ns[i].ID)
		}
		assert.Equal(t, wantIDs, deliveryIDs(got), "claims of 2, oldest due first")
	}
	n, next := e.pending()
	assert.Equal(t, 5, n)
	assert.Equal(t, at(10).Add(minutes(1)), next)
}

func testClaimMaxAttempts(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	ns := e.notify(at(0), change(s.ID, 1, at(0)), change(s.ID, 0, at(1)))
	require.Len(t, ns, 2)
	n1, n2 := ns[0], ns[1]
	req := func(now time.Time) locks.ClaimRequest {
		return locks.ClaimRequest{Now: now, Limit: 10, MaxAttempts: 2, RetryAfter: minutes}
	}
	ds := byID(e.claimWith(req(at(0))))
	require.Len(t, ds, 2)
	e.finish(failed(ds[n1.ID], at(1)))
	e.finish(failed(ds[n2.ID], at(1)))
	ds = byID(e.claimWith(req(at(60))))
	require.Len(t, ds, 2)
	assert.Equal(t, 2, ds[n1.ID].Attempts)
	assert.Equal(t, 2, ds[n2.ID].Attempts)
	e.finish(failed(ds[n1.ID], at(61)))
	// n2's notifier died during its second attempt: no Finish.
	fresh := e.notify(at(100), change(s.ID, 1, at(100)))[0]

	got := e.claimWith(req(at(180)))
	assert.Equal(t, []locks.NotificationID{fresh.ID}, deliveryIDs(got), "a notification that reached MaxAttempts was claimed")
	for _, n := range []locks.Notification{n1, n2} {
		dead := e.note(n.ID)
		assert.Equal(t, locks.Dead, dead.Status, "notification %d after MaxAttempts", n.ID)
		assert.Equal(t, 2, dead.Attempts)
		assert.NotEmpty(t, dead.Reason, "a dead notification says why")
		assert.Equal(t, at(180), dead.Finished, "given up at the claim")
	}
	assert.Len(t, e.note(n1.ID).History, 2)
	assert.Len(t, e.note(n2.ID).History, 1)
	assert.Equal(t, []locks.NotificationID{n1.ID, n2.ID}, noteIDs(e.deadNotes()))
	pn, next := e.pending()
	assert.Equal(t, 1, pn)
	assert.Equal(t, at(180).Add(minutes(1)), next)

	got = e.claimWith(req(at(240)))
	assert.Equal(t, []locks.NotificationID{fresh.ID}, deliveryIDs(got), "a dead notification was claimed")
}

func testClaimDelivery(e *env) {
	t := e.t
	s := e.sensor("door")
	c1, c2, c3 := e.client("alice"), e.client("bob"), e.client("carol")
	e.link(s.ID, c1, c2, c3)
	ns := e.notify(at(0), change(s.ID, 1, at(0)))
	require.Len(t, ns, 3)
	note := map[locks.ClientID]locks.Notification{}
	for _, n := range ns {
		note[n.ClientID] = n
	}

	s.Address = "Tver, Sovetskaya st. 2"
	require.NoError(t, e.s.UpdateSensor(e.ctx, s))
	c1.Name, c1.URL = "Alice (renamed)", "https://alice.example.org/new-hook"
	require.NoError(t, e.s.UpdateClient(e.ctx, c1))
	require.NoError(t, e.s.Unlink(e.ctx, s.ID, c2.ID))
	require.NoError(t, e.s.DeleteClient(e.ctx, c3.ID))

	got := map[locks.ClientID]locks.Delivery{}
	for _, d := range e.claim(at(0), 10) {
		got[d.ClientID] = d
	}
	require.Len(t, got, 3)
	assert.Equal(t, locks.Delivery{Notification: claimed(note[c1.ID], at(0), minutes), Address: s.Address, Client: c1, Linked: true},
		got[c1.ID], "a delivery has the sensor's address and the client as they are now")
	assert.Equal(t, locks.Delivery{Notification: claimed(note[c2.ID], at(0), minutes), Address: s.Address, Client: c2, Linked: false},
		got[c2.ID], "a delivery to an unlinked client")
	assert.Equal(t, locks.Delivery{Notification: claimed(note[c3.ID], at(0), minutes), Address: s.Address, Linked: false},
		got[c3.ID], "a delivery to a deleted client has the zero Client")

	// The notifier ends those not to send; a client linked again is linked at the next claim.
	n3 := note[c3.ID].ID
	e.finish(locks.Result{Notification: n3, N: 1, At: at(1), Status: locks.Cancelled, Reason: "client deleted"})
	assert.Equal(t, locks.Cancelled, e.note(n3).Status)
	e.finish(failed(got[c2.ID], at(1)))
	e.link(s.ID, c2)
	again := e.claim(at(60), 10)
	require.Len(t, again, 2)
	for _, d := range again {
		assert.True(t, d.Linked, "delivery to client %d", d.ClientID)
		assert.NotEqual(t, n3, d.ID)
	}
}

func testFinishStatuses(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	var changes []locks.Change
	for i := range 4 {
		changes = append(changes, change(s.ID, locks.State(i%2), at(i)))
	}
	ns := e.notify(at(0), changes...)
	require.Len(t, ns, 4)
	ds := byID(e.claim(at(0), 10))
	require.Len(t, ds, 4)

	r1 := delivered(ds[ns[0].ID], at(1))
	r2 := locks.Result{Notification: ns[1].ID, N: 1, At: at(2), Status: locks.Dead, Reason: "410 Gone: the client is gone",
		Attempt: attempt(ds[ns[1].ID], at(1), 410, "410 Gone")}
	r3 := failed(ds[ns[2].ID], at(3))
	r4 := locks.Result{Notification: ns[3].ID, N: 1, At: at(4), Status: locks.Cancelled, Reason: "client no longer linked"}
	for _, r := range []locks.Result{r1, r2, r3, r4} {
		e.finish(r)
	}

	want := claimed(ns[0], at(0), minutes)
	want.Status, want.Finished, want.History = locks.Delivered, at(1), []locks.Attempt{*r1.Attempt}
	assert.Equal(t, want, e.note(ns[0].ID), "delivered")

	want = claimed(ns[1], at(0), minutes)
	want.Status, want.Reason, want.Finished = locks.Dead, r2.Reason, at(2)
	want.LastError, want.History = "410 Gone", []locks.Attempt{*r2.Attempt}
	assert.Equal(t, want, e.note(ns[1].ID), "dead")

	want = claimed(ns[2], at(0), minutes)
	want.LastError, want.History = "503 Service Unavailable", []locks.Attempt{*r3.Attempt}
	assert.Equal(t, want, e.note(ns[2].ID), "pending again after a failed attempt, due when the claim said")

	want = claimed(ns[3], at(0), minutes)
	want.Status, want.Reason, want.Finished = locks.Cancelled, r4.Reason, at(4)
	assert.Equal(t, want, e.note(ns[3].ID), "cancelled without an attempt")

	assert.Equal(t, []locks.NotificationID{ns[1].ID}, noteIDs(e.deadNotes()))
	n, next := e.pending()
	assert.Equal(t, 1, n)
	assert.Equal(t, at(60), next)
	got := e.claim(at(60), 10)
	assert.Equal(t, []locks.NotificationID{ns[2].ID}, deliveryIDs(got), "only the pending one is claimed again")

	err := e.s.Finish(e.ctx, locks.Result{Notification: ns[3].ID + 1000, N: 1, At: at(5), Status: locks.Delivered,
		Attempt: &locks.Attempt{Notification: ns[3].ID + 1000, N: 1, At: at(5)}})
	assert.ErrorIs(t, err, locks.ErrNotFound, "Finish of an unknown notification")
}

func testFinishStale(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	n := e.notify(at(0), change(s.ID, 1, at(0)))[0]

	d1 := e.claim(at(0), 10)
	require.Equal(t, []locks.NotificationID{n.ID}, deliveryIDs(d1))
	// Attempt 1 outlives its claim: the notification is claimed again.
	d2 := e.claim(at(60), 10)
	require.Equal(t, []locks.NotificationID{n.ID}, deliveryIDs(d2))
	require.Equal(t, 2, d2[0].Attempts)

	r1 := delivered(d1[0], at(61))
	e.finish(r1)
	got := e.note(n.ID)
	assert.Equal(t, locks.Pending, got.Status, "Finish of a stale attempt changed the status")
	assert.Equal(t, 2, got.Attempts)
	assert.True(t, got.Finished.IsZero())
	assert.Equal(t, []locks.Attempt{*r1.Attempt}, got.History, "the stale attempt joins the history")

	r2 := delivered(d2[0], at(62))
	e.finish(r2)
	got = e.note(n.ID)
	assert.Equal(t, locks.Delivered, got.Status)
	assert.Equal(t, at(62), got.Finished)
	assert.Equal(t, []locks.Attempt{*r1.Attempt, *r2.Attempt}, got.History)
	before := got

	// An attempt reported again after the notification ended.
	r3 := locks.Result{Notification: n.ID, N: 2, At: at(63), Status: locks.Dead, Reason: "late",
		Attempt: attempt(d2[0], at(62), 500, "500 Internal Server Error")}
	e.finish(r3)
	got = e.note(n.ID)
	assert.Equal(t, locks.Delivered, got.Status, "Finish of a notification no longer pending changed its status")
	assert.Equal(t, at(62), got.Finished)
	assert.Empty(t, got.Reason)
	assert.Equal(t, 2, got.Attempts)
	assert.Equal(t, []locks.Attempt{*r1.Attempt, *r2.Attempt, *r3.Attempt}, got.History)
	before.History = got.History
	before.LastError = got.LastError // what a late failure leaves here is not said
	assert.Equal(t, before, got)
	e.finish(locks.Result{Notification: n.ID, N: 2, At: at(64), Status: locks.Pending})
	assert.Equal(t, got, e.note(n.ID), "Finish without an attempt of a notification no longer pending")

	// A notification cancelled by a newer change while its attempt ran.
	m := e.notify(at(100), change(s.ID, 0, at(100)))[0]
	dm := e.claim(at(100), 10)
	require.Equal(t, []locks.NotificationID{m.ID}, deliveryIDs(dm))
	e.update([]locks.SensorID{s.ID}, locks.Effects{Cancel: []locks.SensorID{s.ID}, Now: at(101)})
	rm := delivered(dm[0], at(102))
	e.finish(rm)
	got = e.note(m.ID)
	assert.Equal(t, locks.Cancelled, got.Status, "Finish of a cancelled notification changed its status")
	assert.Equal(t, "superseded", got.Reason)
	assert.Equal(t, at(101), got.Finished)
	assert.Equal(t, []locks.Attempt{*rm.Attempt}, got.History, "the attempt joins the history whatever happened meanwhile")
}

func testReplay(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	ns := e.notify(at(0), change(s.ID, 1, at(0)), change(s.ID, 0, at(1)))
	require.Len(t, ns, 2)
	n, other := ns[0], ns[1]
	ds := byID(e.claim(at(0), 10))
	require.Len(t, ds, 2)
	e.finish(locks.Result{Notification: n.ID, N: 1, At: at(1), Status: locks.Dead, Reason: "gave up",
		Attempt: attempt(ds[n.ID], at(0), 500, "500 Internal Server Error")})
	e.finish(delivered(ds[other.ID], at(1)))
	require.Equal(t, []locks.NotificationID{n.ID}, noteIDs(e.deadNotes()))

	require.NoError(t, e.s.Replay(e.ctx, n.ID, at(5)))
	got := e.note(n.ID)
	assert.Equal(t, locks.Pending, got.Status)
	assert.Zero(t, got.Attempts, "a replayed notification's attempts count from zero")
	assert.Equal(t, at(5), got.NextAttempt)
	assert.True(t, got.Finished.IsZero(), "a replayed notification is not finished")
	assert.Empty(t, e.deadNotes())
	pn, next := e.pending()
	assert.Equal(t, 1, pn)
	assert.Equal(t, at(5), next)

	req := locks.ClaimRequest{Now: at(4), Limit: 10, MaxAttempts: 1, RetryAfter: minutes}
	assert.Empty(t, e.claimWith(req), "claimed before the replay's time")
	req.Now = at(5)
	d := e.claimWith(req)
	require.Equal(t, []locks.NotificationID{n.ID}, deliveryIDs(d), "a replayed notification is claimed even with MaxAttempts 1")
	assert.Equal(t, 1, d[0].Attempts)

	err := e.s.Replay(e.ctx, n.ID, at(6))
	assert.ErrorIs(t, err, locks.ErrConflict, "Replay of a pending notification")
	err = e.s.Replay(e.ctx, other.ID, at(6))
	assert.ErrorIs(t, err, locks.ErrConflict, "Replay of a delivered notification")
	assert.Equal(t, locks.Delivered, e.note(other.ID).Status, "a refused Replay changed the notification")
	e.update([]locks.SensorID{s.ID}, locks.Effects{Cancel: []locks.SensorID{s.ID}, Now: at(7)})
	require.Equal(t, locks.Cancelled, e.note(n.ID).Status)
	err = e.s.Replay(e.ctx, n.ID, at(8))
	assert.ErrorIs(t, err, locks.ErrConflict, "Replay of a cancelled notification")
	assert.Equal(t, locks.Cancelled, e.note(n.ID).Status, "a refused Replay changed the notification")
	err = e.s.Replay(e.ctx, other.ID+1000, at(8))
	assert.ErrorIs(t, err, locks.ErrNotFound, "Replay of an unknown notification")
}

func testPending(e *env) {
	t := e.t
	n, next := e.pending()
	assert.Zero(t, n)
	assert.True(t, next.IsZero(), "earliest next attempt with none pending: %v", next)

	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	late := e.notify(at(10), change(s.ID, 1, at(10)))[0]
	early := e.notify(at(5), change(s.ID, 0, at(5)))[0]
	n, next = e.pending()
	assert.Equal(t, 2, n)
	assert.Equal(t, at(5), next)

	req := func(now time.Time) locks.ClaimRequest {
		return locks.ClaimRequest{Now: now, Limit: 10, MaxAttempts: 5, RetryAfter: hours}
	}
	de := e.claimWith(req(at(5)))
	require.Equal(t, []locks.NotificationID{early.ID}, deliveryIDs(de))
	n, next = e.pending()
	assert.Equal(t, 2, n, "a claimed notification is still pending")
	assert.Equal(t, at(10), next)

	dl := e.claimWith(req(at(10)))
	require.Equal(t, []locks.NotificationID{late.ID}, deliveryIDs(dl))
	e.finish(delivered(dl[0], at(11)))
	n, next = e.pending()
	assert.Equal(t, 1, n)
	assert.Equal(t, at(5).Add(time.Hour), next)

	e.finish(locks.Result{Notification: early.ID, N: 1, At: at(12), Status: locks.Dead, Reason: "gave up"})
	n, next = e.pending()
	assert.Zero(t, n)
	assert.True(t, next.IsZero(), "earliest next attempt with none pending: %v", next)
}
