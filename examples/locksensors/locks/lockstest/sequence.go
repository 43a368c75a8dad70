package lockstest

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/clock/clocktest"
	"github.com/feedkit/feedkit/examples/locksensors/locks"
)

var sequenceTests = []subtest{
	{"CountsEveryEventOfASensor", testSequenceCounts},
	{"SameInEveryAttempt", testSequenceAttempts},
	{"ConcurrentUpdatesNumberWithoutGaps", testConcurrentSequences},
	{"ConcurrentIngestersNumberWithoutGaps", testConcurrentIngest},
}

// event is a Change of any event, read at readingAt by the sensor.
func event(sensor locks.SensorID, ev locks.Event, state locks.State, when, readingAt time.Time) locks.Change {
	return locks.Change{SensorID: sensor, Event: ev, State: state, At: when, ReadingAt: readingAt}
}

// sequences returns the Sequence of each notification, in their order.
func sequences(ns []locks.Notification) []int64 {
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = n.Sequence
	}
	return out
}

// byNoteID returns ns ordered by ID: the order they were created in.
func byNoteID(ns []locks.Notification) []locks.Notification {
	out := slices.Clone(ns)
	slices.SortFunc(out, func(a, b locks.Notification) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func testSequenceCounts(e *env) {
	t := e.t
	a, b, lonely := e.sensor("a"), e.sensor("B"), e.sensor("lonely")
	alice, bob := e.client("alice"), e.client("bob")
	e.link(a.ID, alice, bob)
	e.link(b.ID, bob)
	assert.Zero(t, e.current(a.ID).Sequence, "the sequence of a sensor before its first event")

	// The reading's time keeps its microseconds.
	read := base.Add(-1500 * time.Millisecond)
	first := e.notify(at(0), event(a.ID, locks.EventChanged, 1, read, read))
	require.Len(t, first, 2)
	for _, n := range first {
		assert.Equal(t, int64(1), n.Sequence, "the first event's notification to client %d", n.ClientID)
		assert.Equal(t, read, n.ReadingAt, "notification %d", n.ID)
	}
	assert.Equal(t, int64(1), e.current(a.ID).Sequence)

	// fn sees the sequence of the sensor's latest event.
	lostAt := at(3600)
	var seen int64
	n, err := e.s.Update(e.ctx, []locks.SensorID{a.ID}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
		seen = cur[a.ID].Sequence
		c := cur[a.ID]
		c.Lost = true
		return locks.Effects{States: []locks.Current{c}, Notify: []locks.Change{event(a.ID, locks.EventLost, 1, lostAt, read)}, Now: lostAt}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, int64(1), seen, "Current.Sequence that fn saw")

	// Two events of one Update, in the order of Notify; a state that says another
	// sequence changes nothing of it.
	back := at(3700)
	e.update([]locks.SensorID{a.ID}, locks.Effects{
		States: []locks.Current{{SensorID: a.ID, Known: true, State: 0, ReadingAt: back, ChangedAt: back, LastSeen: back, Sequence: 0}},
		Notify: []locks.Change{event(a.ID, locks.EventRestored, 1, back, back), event(a.ID, locks.EventChanged, 0, back, back)},
		Now:    back,
	})
	assert.Equal(t, int64(4), e.current(a.ID).Sequence, "after four events, whatever the state written said")

	// Each sensor counts its own, linked or not.
	bn := e.notify(at(3701), event(b.ID, locks.EventChanged, 1, at(3701), at(3701)))
	require.Len(t, bn, 1)
	assert.Equal(t, int64(1), bn[0].Sequence, "the first event of another sensor")
	assert.Zero(t, e.update([]locks.SensorID{lonely.ID}, locks.Effects{Notify: []locks.Change{
		event(lonely.ID, locks.EventChanged, 1, at(1), at(1)), event(lonely.ID, locks.EventChanged, 0, at(2), at(2))}, Now: at(2)}))
	assert.Equal(t, int64(2), e.current(lonely.ID).Sequence, "the events of a sensor no client is linked to count too")
	e.update([]locks.SensorID{lonely.ID}, locks.Effects{States: []locks.Current{{SensorID: lonely.ID, Known: true, Sequence: 99}}, Now: at(3)})
	assert.Equal(t, int64(2), e.current(lonely.ID).Sequence, "a state written with a sequence of its own")

	// A cancelled notification keeps its sequence; the one created after it takes the next.
	e.update([]locks.SensorID{a.ID}, locks.Effects{Cancel: []locks.SensorID{a.ID},
		Notify: []locks.Change{event(a.ID, locks.EventChanged, 1, at(3800), at(3800))}, Now: at(3800)})
	all := byNoteID(e.notes(a.ID))
	assert.Equal(t, []int64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, sequences(all), "the sequences of a's notifications, by ID")
	var events []locks.Event
	for i, n := range all {
		if i%2 == 0 {
			events = append(events, n.Event)
		}
		assert.Equal(t, all[i-i%2].Event, n.Event, "both clients are told of the event with sequence %d", n.Sequence)
		if n.Sequence < 5 {
			assert.Equal(t, locks.Cancelled, n.Status, "notification %d, cancelled by the last Update", n.ID)
		}
	}
	assert.Equal(t, []locks.Event{locks.EventChanged, locks.EventLost, locks.EventRestored, locks.EventChanged, locks.EventChanged}, events)
	assert.Equal(t, []time.Time{read, read, read, read, back, back, back, back, at(3800), at(3800)}, readingTimes(all))
	assert.Equal(t, int64(5), e.current(a.ID).Sequence)
	for _, n := range all {
		assert.Equal(t, n, e.note(n.ID), "Notification(%d)", n.ID)
	}
}

// readingTimes returns the ReadingAt of each notification, in their order.
func readingTimes(ns []locks.Notification) []time.Time {
	out := make([]time.Time, len(ns))
	for i, n := range ns {
		out[i] = n.ReadingAt
	}
	return out
}

func testSequenceAttempts(e *env) {
	t := e.t
	s := e.sensor("door")
	c := e.client("alice")
	e.link(s.ID, c)
	read := base.Add(-250 * time.Microsecond)
	e.notify(at(0), event(s.ID, locks.EventChanged, 1, read, read))
	lost := e.notify(at(1), event(s.ID, locks.EventLost, 1, at(1), read))
	require.Len(t, lost, 1)
	require.Equal(t, int64(2), lost[0].Sequence)

	check := func(ds []locks.Delivery, what string) {
		t.Helper()
		for _, d := range ds {
			if d.ID == lost[0].ID {
				assert.Equal(t, int64(2), d.Sequence, "%s: the sequence of the loss", what)
				assert.Equal(t, read, d.ReadingAt, "%s: the reading time of the loss", what)
				return
			}
		}
		t.Errorf("%s: the loss was not claimed: %v", what, deliveryIDs(ds))
	}
	req := locks.ClaimRequest{Now: at(1), Limit: 10, MaxAttempts: 2, RetryAfter: minutes}
	ds := e.claimWith(req)
	check(ds, "the first attempt")
	for _, d := range ds {
		e.finish(failed(d, at(2)))
	}
	req.Now = at(1).Add(time.Minute)
	ds = e.claimWith(req)
	check(ds, "the retry")
	for _, d := range ds {
		e.finish(failed(d, req.Now.Add(time.Second)))
	}
	req.Now = req.Now.Add(2 * time.Minute)
	assert.Empty(t, e.claimWith(req), "a notification past its last attempt")
	require.Equal(t, locks.Dead, e.note(lost[0].ID).Status)

	require.NoError(t, e.s.Replay(e.ctx, lost[0].ID, req.Now))
	check(e.claimWith(req), "the attempt after a replay")
	assert.Equal(t, int64(2), e.note(lost[0].ID).Sequence)
	assert.Equal(t, int64(2), e.current(s.ID).Sequence, "attempts and replays are no events")
}

// testConcurrentSequences runs Updates of two sensors at once, each recording one event
// of each (a change) or two (a loss and a restoration): the sequences of each sensor's
// notifications are 1 to the number of its events, each once, in the order of their
// IDs, and the last carries the sensor's state.
func testConcurrentSequences(e *env) {
	t := e.t
	const workers, rounds = 8, 25
	a, b := e.sensor("a"), e.sensor("b")
	c := e.client("alice")
	e.link(a.ID, c)
	e.link(b.ID, c)
	ctx, cancel := context.WithTimeout(e.ctx, concurrencyTimeout)
	defer cancel()

	var events [2]atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		ids := []locks.SensorID{a.ID, b.ID}
		if w%2 == 1 {
			ids = []locks.SensorID{b.ID, a.ID}
		}
		wg.Go(func() {
			<-start
			for r := range rounds {
				var made [2]int64
				_, err := e.s.Update(ctx, ids, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
					made = [2]int64{}
					var eff locks.Effects
					for i, id := range []locks.SensorID{a.ID, b.ID} {
						next, err := flipped(cur[id])
						if err != nil {
							return locks.Effects{}, err
						}
						eff.States = append(eff.States, next)
						eff.Now = next.LastSeen
						if (w+r)%3 == 0 {
							eff.Notify = append(eff.Notify, event(id, locks.EventLost, next.State, next.LastSeen, next.ReadingAt),
								event(id, locks.EventRestored, next.State, next.LastSeen, next.ReadingAt))
							made[i] += 2
						} else {
							eff.Notify = append(eff.Notify, event(id, locks.EventChanged, next.State, next.ReadingAt, next.ReadingAt))
							made[i]++
						}
					}
					return eff, nil
				})
				if !assert.NoError(t, err, "Update of %q", ids) {
					return
				}
				events[0].Add(made[0])
				events[1].Add(made[1])
			}
		})
	}
	close(start)
	wait(e, ctx, &wg, "the concurrent Updates")

	for i, id := range []locks.SensorID{a.ID, b.ID} {
		checkGapFree(e, id, events[i].Load())
	}
}

// checkGapFree checks that the sensor has had n events, each notified to one client:
// in the order of their IDs, its notifications have the sequences 1 to n, and the last
// one carries the sensor's state.
func checkGapFree(e *env, id locks.SensorID, n int64) {
	t := e.t
	t.Helper()
	ns := byNoteID(e.notes(id))
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i) + 1
	}
	assert.Equal(t, want, sequences(ns), "sensor %q: the sequences of its %d events, by notification ID", id, n)
	cur := e.current(id)
	assert.Equal(t, n, cur.Sequence, "sensor %q: the sequence of its latest event", id)
	if len(ns) > 0 {
		last := ns[len(ns)-1]
		assert.Equal(t, cur.State, last.State, "sensor %q: the state its latest notification carries", id)
	}
}

// testConcurrentIngest runs two Ingesters, as two queue consumers would, on batches of
// readings of overlapping sensors; after every few batches each consumer also marks
// lost the sensor it read last, as a Liveness would, which the next reading of it
// restores: every change, loss and restoration of a sensor takes the next number, with
// no gap and no repeat, and the one numbered last carries the sensor's state.
func testConcurrentIngest(e *env) {
	t := e.t
	const consumers, batches, perBatch = 2, 40, 6
	ids := []locks.SensorID{"s0", "S1", "s2", "S3"}
	c := e.client("alice")
	for _, id := range ids {
		e.sensor(id)
		e.link(id, c)
	}
	ctx, cancel := context.WithTimeout(e.ctx, concurrencyTimeout)
	defer cancel()
	clk := clocktest.NewFake(base)
	var tick atomic.Int64 // the sensors' clock, one microsecond a reading

	ingesters := make([]*locks.Ingester, consumers)
	for i := range ingesters {
		in, err := locks.NewIngester(e.s, locks.IngesterConfig{Clock: clk})
		require.NoError(t, err)
		ingesters[i] = in
	}
	// lose records that the sensor is lost unless it is already, or was never read, and
	// reports whether it did.
	lose := func(id locks.SensorID) (bool, error) {
		var lost bool
		_, err := e.s.Update(ctx, []locks.SensorID{id}, func(cur map[locks.SensorID]locks.Current) (locks.Effects, error) {
			c := cur[id]
			if lost = c.Known && !c.Lost; !lost {
				return locks.Effects{}, nil
			}
			c.Lost = true
			now := base.Add(time.Duration(tick.Load()) * time.Microsecond)
			return locks.Effects{States: []locks.Current{c}, Now: now,
				Notify: []locks.Change{event(id, locks.EventLost, c.State, now, c.ReadingAt)}}, nil
		})
		return lost, err
	}
	var losses atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w, in := range ingesters {
		wg.Go(func() {
			<-start
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for b := range batches {
				msgs := make([]locks.Message, perBatch)
				var last locks.SensorID
				for k := range msgs {
					ts := base.Add(time.Duration(tick.Add(1)) * time.Microsecond)
					last = ids[rng.IntN(len(ids))]
					msgs[k] = locks.Message{Received: ts, Body: fmt.Appendf(nil, `{"sensor_id":%q,"data":%d,"ts":%q}`,
						last, rng.IntN(2), ts.Format(time.RFC3339Nano))}
				}
				if !assert.NoError(t, in.HandleBatch(ctx, msgs), "consumer %d", w) {
					return
				}
				if b%4 != 3 {
					continue
				}
				// The first of these, whichever consumer makes it, finds the sensor its
				// consumer has just read, and no loss before it: one loss at least.
				lost, err := lose(last)
				if !assert.NoError(t, err, "a loss of %q", last) {
					return
				}
				if lost {
					losses.Add(1)
				}
			}
		})
	}
	close(start)
	wait(e, ctx, &wg, "the concurrent ingest")

	// Every event notified the one client: the notifications created count the events.
	total := losses.Load()
	for _, in := range ingesters {
		total += int64(in.Stats().Notifications)
	}
	var sum int64
	for _, id := range ids {
		n := e.current(id).Sequence
		checkGapFree(e, id, n)
		sum += n
	}
	assert.Equal(t, total, sum, "the sensors' events, against the notifications the writers created")
	assert.Positive(t, losses.Load(), "losses recorded")
}
