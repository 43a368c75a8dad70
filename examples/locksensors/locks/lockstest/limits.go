package lockstest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var limitTests = []subtest{
	{"ListSensors", testLimitListSensors},
	{"ListClients", testLimitListClients},
	{"Readings", testLimitReadings},
	{"Notifications", testLimitNotifications},
	{"DeadNotifications", testLimitDeadNotifications},
	{"DeadLetters", testLimitDeadLetters},
	{"Claim", testLimitClaim},
}

// overDefault is how many entries each limit test stores: more than a default page.
const overDefault = locks.DefaultLimit + 2

// checkLimits asks list, over a store holding overDefault entries, for pages of every
// kind of size: 0 is a page of locks.DefaultLimit (not empty, not all), 1 and
// locks.MaxLimit are taken as given, and a negative size or one above the maximum is
// refused with a *locks.FieldError naming field, rather than clamped.
func checkLimits(e *env, field string, list func(limit int) (int, error)) {
	t := e.t
	for _, bad := range []int{-1, locks.MaxLimit + 1} {
		n, err := list(bad)
		var fe *locks.FieldError
		if assert.True(t, errors.As(err, &fe), "limit %d: want a *FieldError, got %v", bad, err) {
			assert.Equal(t, field, fe.Field, "limit %d", bad)
			assert.Contains(t, fe.Problem, fmt.Sprint(bad), "the problem quotes the value")
			assert.True(t, strings.Contains(fe.Problem, fmt.Sprint(locks.MaxLimit)), "the problem says the maximum: %q", fe.Problem)
		}
		assert.Zero(t, n, "limit %d", bad)
	}
	for _, c := range []struct{ limit, want int }{{0, locks.DefaultLimit}, {1, 1}, {locks.MaxLimit, overDefault}} {
		n, err := list(c.limit)
		require.NoError(t, err, "limit %d", c.limit)
		assert.Equal(t, c.want, n, "limit %d", c.limit)
	}
}

func testLimitListSensors(e *env) {
	for i := range overDefault {
		e.sensor(locks.SensorID(fmt.Sprintf("s%03d", i)))
	}
	checkLimits(e, "limit", func(limit int) (int, error) {
		ss, err := e.s.ListSensors(e.ctx, "", limit)
		return len(ss), err
	})
}

func testLimitListClients(e *env) {
	for i := range overDefault {
		e.client(fmt.Sprint("client ", i))
	}
	checkLimits(e, "limit", func(limit int) (int, error) {
		cs, err := e.s.ListClients(e.ctx, 0, limit)
		return len(cs), err
	})
}

func testLimitReadings(e *env) {
	s := e.sensor("door")
	rs := make([]locks.StoredReading, overDefault)
	for i := range rs {
		rs[i] = locks.StoredReading{SensorID: s.ID, State: locks.State(i % 2), At: at(i), Received: at(i), Outcome: locks.Changed}
	}
	e.update([]locks.SensorID{s.ID}, locks.Effects{Readings: rs, Now: at(overDefault)})
	checkLimits(e, "Range.Limit", func(limit int) (int, error) {
		got, err := e.s.Readings(e.ctx, s.ID, locks.Range{Limit: limit})
		return len(got), err
	})
}

// overDefaultNotes notifies overDefault changes of one sensor to one client.
func (e *env) overDefaultNotes() locks.SensorID {
	s := e.sensor("door")
	e.link(s.ID, e.client("alice"))
	changes := make([]locks.Change, overDefault)
	for i := range changes {
		changes[i] = change(s.ID, locks.State(i%2), at(i))
	}
	require.Equal(e.t, overDefault, e.update([]locks.SensorID{s.ID}, locks.Effects{Notify: changes, Now: at(overDefault)}))
	return s.ID
}

func testLimitNotifications(e *env) {
	s := e.overDefaultNotes()
	checkLimits(e, "Range.Limit", func(limit int) (int, error) {
		got, err := e.s.Notifications(e.ctx, s, locks.Range{Limit: limit})
		return len(got), err
	})
}

func testLimitDeadNotifications(e *env) {
	e.overDefaultNotes()
	// Every one found at its last attempt (none allowed) is made dead, none returned.
	got := e.claimWith(locks.ClaimRequest{Now: at(overDefault), Limit: locks.MaxLimit, MaxAttempts: 0, RetryAfter: minutes})
	require.Empty(e.t, got)
	checkLimits(e, "limit", func(limit int) (int, error) {
		ns, err := e.s.DeadNotifications(e.ctx, 0, limit)
		return len(ns), err
	})
}

func testLimitDeadLetters(e *env) {
	ds := make([]locks.DeadLetter, overDefault)
	for i := range ds {
		ds[i] = locks.DeadLetter{Raw: fmt.Appendf(nil, `{"n": %d}`, i), Reason: "refused", Received: at(i)}
	}
	e.update(nil, locks.Effects{DeadLetters: ds, Now: at(overDefault)})
	checkLimits(e, "limit", func(limit int) (int, error) {
		got, err := e.s.DeadLetters(e.ctx, 0, limit)
		return len(got), err
	})
}

// testLimitClaim: a claim takes what it returns, so the sizes asked add up: the refused
// ones take nothing, 0 takes a default page, 1 one more, and the maximum the rest.
func testLimitClaim(e *env) {
	e.overDefaultNotes()
	claimed := 0
	checkLimits(e, "ClaimRequest.Limit", func(limit int) (int, error) {
		ds, err := e.s.Claim(e.ctx, locks.ClaimRequest{Now: at(overDefault), Limit: limit, MaxAttempts: 10, RetryAfter: hours})
		claimed += len(ds)
		if limit == locks.MaxLimit { // what the two pages before left
			return len(ds) + locks.DefaultLimit + 1, err
		}
		return len(ds), err
	})
	assert.Equal(e.t, overDefault, claimed, "every notification claimed once")
}
