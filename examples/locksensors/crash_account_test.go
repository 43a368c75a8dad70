//go:build crash

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/examples/locksensors/locks/pgstore"
	"github.com/feedkit/feedkit/internal/crashtest"
)

// crashRun is what the crash test's parent did, for the accounting.
type crashRun struct {
	sensors   []locks.SensorID
	addresses map[locks.SensorID]string
	readings  []crashReading // as published, in order
	hooks     []*crashHook
	victims   int // processes killed, a kill of both counting two
}

// crashReadingKey is a reading's identity: its sensor and its ts, which the parent made
// unique.
type crashReadingKey struct {
	sensor locks.SensorID
	at     int64 // Unix microseconds
}

// crashAccount checks the store and the clients' records once every reading is stored,
// no notification is pending and the services have stopped, and sets the counts in c.
func crashAccount(t *testing.T, store *pgstore.Store, run crashRun, c *crashtest.Counts) {
	currents := crashAccountReadings(t, store, run, c)
	notes := crashAccountNotifications(t, store, run, currents, c)
	crashAccountReceipts(t, run, notes, c)
	crashAccountKept(t, run, currents, c)
	dead, err := store.DeadLetters(t.Context(), 0, 1)
	require.NoError(t, err)
	assert.Empty(t, dead, "no reading refused")
}

// crashAccountReadings checks that every reading published is in its sensor's history
// with its state, none else is, and one there twice (a redelivery) changed nothing the
// second time; and that every sensor's state is that of its last reading. It returns
// the sensors' states.
func crashAccountReadings(t *testing.T, store *pgstore.Store, run crashRun, c *crashtest.Counts) map[locks.SensorID]locks.Current {
	ctx := t.Context()
	want := make(map[crashReadingKey]locks.State, len(run.readings))
	last := map[locks.SensorID]crashReading{}
	for _, r := range run.readings {
		want[crashReadingKey{r.sensor, r.at.UnixMicro()}] = r.state
		last[r.sensor] = r
	}
	c.Set("readings_published", len(run.readings))

	got := map[crashReadingKey][]locks.Outcome{}
	var unknown []string
	outcomes := map[locks.Outcome]int{}
	rows := 0
	for _, id := range run.sensors {
		for r := (locks.Range{Limit: locks.MaxLimit}); ; {
			page, err := store.Readings(ctx, id, r)
			require.NoError(t, err)
			for _, sr := range page {
				rows++
				outcomes[sr.Outcome]++
				k := crashReadingKey{id, sr.At.UnixMicro()}
				if st, ok := want[k]; !ok || st != sr.State {
					unknown = append(unknown, fmt.Sprintf("%s %s state %d", id, sr.At.Format("15:04:05.000000"), sr.State))
					continue
				}
				got[k] = append(got[k], sr.Outcome)
			}
			if len(page) < r.Limit {
				break
			}
			end := page[len(page)-1]
			r.After = locks.Cursor{At: end.At, ID: end.ID}
		}
	}
	var missing []string
	changedTwice := 0
	for k := range want {
		o := got[k]
		if len(o) == 0 {
			missing = append(missing, fmt.Sprintf("%s %d", k.sensor, k.at))
		}
		changed := 0
		for _, oc := range o {
			if oc == locks.Changed {
				changed++
			}
		}
		if changed > 1 {
			changedTwice++
		}
	}
	c.Set("readings_stored", len(got))
	c.Set("readings_stored_again", rows-len(got))
	c.Set("outcome_changed", outcomes[locks.Changed])
	c.Set("outcome_same", outcomes[locks.Same])
	c.Set("outcome_stale", outcomes[locks.Stale])
	assert.Empty(t, first10(unknown), "readings in the history that were not published (%d, the first 10)", len(unknown))
	assert.Empty(t, first10(missing), "readings published and not in the history (%d, the first 10)", len(missing))
	assert.Equal(t, len(run.readings), len(got), "every reading published stored")
	assert.Zero(t, changedTwice, "a reading stored again (redelivered) changes nothing the second time")

	currents := make(map[locks.SensorID]locks.Current, len(run.sensors))
	var wrong []string
	for _, id := range run.sensors {
		cur, err := store.Current(ctx, id)
		require.NoError(t, err)
		currents[id] = cur
		if l := last[id]; !cur.Known || cur.Lost || cur.State != l.state || !cur.ReadingAt.Equal(l.at) {
			wrong = append(wrong, fmt.Sprintf("%s: %+v, its last reading %+v", id, cur, l))
		}
	}
	assert.Empty(t, first10(wrong), "sensors whose state is not their last reading's (%d, the first 10)", len(wrong))
	return currents
}

// crashAccountNotifications checks that each event of each sensor (its sequences 1 to
// the state's) has one notification for each client linked to it, and nothing else;
// that none is pending or dead, and the last event's are all delivered. It returns
// every notification, with its attempts.
func crashAccountNotifications(t *testing.T, store *pgstore.Store, run crashRun, currents map[locks.SensorID]locks.Current,
	c *crashtest.Counts) map[locks.NotificationID]locks.Notification {
	ctx := t.Context()
	notes := map[locks.NotificationID]locks.Notification{}
	statuses := map[locks.Status]int{}
	events, links, lost := 0, 0, 0
	var wrong []string
	for _, id := range run.sensors {
		cur := currents[id]
		events += int(cur.Sequence)
		var linked []locks.ClientID
		for _, h := range run.hooks {
			if h.linked[id] {
				linked = append(linked, h.client)
			}
		}
		links += len(linked)
		bySeq := map[int64][]locks.ClientID{}
		for r := (locks.Range{Limit: locks.MaxLimit}); ; {
			page, err := store.Notifications(ctx, id, r)
			require.NoError(t, err)
			for _, n := range page {
				notes[n.ID] = n
				statuses[n.Status]++
				bySeq[n.Sequence] = append(bySeq[n.Sequence], n.ClientID)
				if n.Event != locks.EventChanged {
					wrong = append(wrong, fmt.Sprintf("notification %d is of a %s event: no sensor fell silent", n.ID, n.Event))
				}
				if n.Sequence == cur.Sequence && n.Status != locks.Delivered {
					wrong = append(wrong, fmt.Sprintf("notification %d of %s's last event is %s", n.ID, id, n.Status))
				}
				if k := n.Attempts - len(n.History); k >= 0 {
					lost += k // claimed, and never recorded: its notifier died during it
				} else {
					wrong = append(wrong, fmt.Sprintf("notification %d: %d attempts recorded of %d claimed", n.ID, len(n.History), n.Attempts))
				}
			}
			if len(page) < r.Limit {
				break
			}
			end := page[len(page)-1]
			r.After = locks.Cursor{At: end.At, ID: int64(end.ID)}
		}
		if len(bySeq) != int(cur.Sequence) {
			wrong = append(wrong, fmt.Sprintf("%s: notifications of %d sequences, its state at %d", id, len(bySeq), cur.Sequence))
		}
		for seq := int64(1); seq <= cur.Sequence; seq++ {
			if got := slices.Sorted(slices.Values(bySeq[seq])); !slices.Equal(got, linked) {
				wrong = append(wrong, fmt.Sprintf("%s: event %d notified to %v, linked to %v", id, seq, got, linked))
			}
		}
	}
	c.Set("links", links)
	c.Set("events", events)
	c.Set("notifications", len(notes))
	c.Set("delivered", statuses[locks.Delivered])
	c.Set("cancelled", statuses[locks.Cancelled])
	c.Set("attempts_lost", lost)
	assert.Empty(t, first10(wrong), "notifications not as the events and links say (%d, the first 10)", len(wrong))
	assert.Equal(t, len(notes), statuses[locks.Delivered]+statuses[locks.Cancelled], "none pending or dead: %v", statuses)
	// A notifier has at most its workers' attempts under way: a kill cuts those short.
	assert.LessOrEqual(t, lost, run.victims*locks.DefaultWorkers, "attempts cut short, at most the workers' of each process killed")
	return notes
}

// crashAccountReceipts checks what the clients received against the store: every
// notification delivered was received by its client, every one received is a
// notification of the store to that client with the body the store says, and one
// received more than once came again with the same key and the same body, after
// an attempt a kill cut short (claimed, never recorded) or one the store recorded as
// failed (its answer lost or late).
func crashAccountReceipts(t *testing.T, run crashRun, notes map[locks.NotificationID]locks.Notification, c *crashtest.Counts) {
	received := map[locks.NotificationID]bool{}
	var wrong, differ []string
	receipts, cancelled, duplicates, afterKill, afterFailed, unexplained, torn, late := 0, 0, 0, 0, 0, 0, 0, 0
	for _, h := range run.hooks {
		h.mu.Lock()
		assert.Empty(t, first10(h.bad), "%s: requests that were not a notification", h.name)
		torn += h.torn
		late += h.late
		for key, bodies := range h.receipts {
			receipts += len(bodies)
			s, ok := strings.CutPrefix(key, "notification-")
			id, err := strconv.ParseInt(s, 10, 64)
			n, known := notes[locks.NotificationID(id)]
			if !ok || err != nil || !known || n.ClientID != h.client {
				wrong = append(wrong, fmt.Sprintf("%s received %s, not a notification of its own (client %d)", h.name, key, n.ClientID))
				continue
			}
			received[n.ID] = true
			if n.Status == locks.Cancelled {
				cancelled++ // superseded, or its attempt cut short, after it had arrived
			}
			var b locks.Body
			require.NoError(t, json.Unmarshal(bodies[0], &b))
			b.Time, b.ReadingAt = b.Time.UTC(), b.ReadingAt.UTC()
			want := locks.Body{NotificationID: n.ID, SensorID: n.SensorID, Address: run.addresses[n.SensorID], Event: n.Event,
				State: n.State, Time: n.At.UTC(), ReadingAt: n.ReadingAt.UTC(), Sequence: n.Sequence}
			if b != want {
				wrong = append(wrong, fmt.Sprintf("%s received %+v for notification %+v", h.name, b, want))
			}
			if len(bodies) > n.Attempts {
				wrong = append(wrong, fmt.Sprintf("%s received notification %d %d times, in %d attempts", h.name, n.ID, len(bodies), n.Attempts))
			}
			if len(bodies) == 1 {
				continue
			}
			extra := len(bodies) - 1
			duplicates += extra
			for _, again := range bodies[1:] {
				if !bytes.Equal(again, bodies[0]) {
					differ = append(differ, fmt.Sprintf("%s %s: %s, then %s", h.name, key, bodies[0], again))
				}
			}
			failed := 0
			for _, a := range n.History {
				if !a.Delivered() {
					failed++
				}
			}
			byKill := min(extra, n.Attempts-len(n.History))
			byFailure := min(extra-byKill, failed)
			afterKill += byKill
			afterFailed += byFailure
			unexplained += extra - byKill - byFailure
		}
		h.mu.Unlock()
	}
	missing := 0
	for id, n := range notes {
		if n.Status == locks.Delivered && !received[id] {
			missing++
		}
	}
	c.Set("received", len(received))
	c.Set("received_cancelled", cancelled)
	c.Set("receipts", receipts)
	c.Set("duplicates", duplicates)
	c.Set("duplicates_after_kill", afterKill)
	c.Set("duplicates_after_failed_attempt", afterFailed)
	c.Set("torn_requests", torn)
	c.Set("late_dropped", late)
	assert.Empty(t, first10(wrong), "receipts that are not the store's notifications (%d, the first 10)", len(wrong))
	assert.Zero(t, missing, "notifications delivered by the store's record and never received")
	assert.Empty(t, first10(differ), "a notification received again with another body (%d, the first 10)", len(differ))
	assert.Zero(t, unexplained, "notifications received again with no attempt cut short or failed before")
}

// crashAccountKept checks that what each client keeps under the receiver's rule
// (locks.Latest) is, for every sensor linked to it, the sensor's final state: its
// latest event's sequence and state, the state of the last reading published; and
// that it was told nothing of the others.
func crashAccountKept(t *testing.T, run crashRun, currents map[locks.SensorID]locks.Current, c *crashtest.Counts) {
	last := map[locks.SensorID]locks.State{}
	for _, r := range run.readings {
		last[r.sensor] = r.state
	}
	kept := 0
	var wrong []string
	for _, h := range run.hooks {
		for _, id := range run.sensors {
			b, ok := h.latest.Get(id)
			cur := currents[id]
			switch {
			case !h.linked[id]:
				if ok {
					wrong = append(wrong, fmt.Sprintf("%s, not linked to %s, keeps %+v", h.name, id, b))
				}
			case ok && b.Sequence == cur.Sequence && b.State == last[id] && b.ReadingAt.Equal(cur.ChangedAt):
				kept++
			default:
				wrong = append(wrong, fmt.Sprintf("%s keeps %+v (%v) of %s, whose state is %+v and last reading's state %d",
					h.name, b, ok, id, cur, last[id]))
			}
		}
	}
	c.Set("final_states_kept", kept)
	assert.Equal(t, c.Get("links"), kept, "every client keeps the final state of every sensor linked to it")
	assert.Empty(t, first10(wrong), "clients that do not keep their sensors' final state (%d, the first 10)", len(wrong))
}

func first10(s []string) []string { return s[:min(len(s), 10)] }
