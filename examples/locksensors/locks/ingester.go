package locks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/feedkit/feedkit/clock"
)

// IngesterConfig holds an Ingester's optional settings; the zero value is usable.
type IngesterConfig struct {
	// Clock gives the time notifications are created and due; nil is the wall clock.
	Clock clock.Clock
	// Logger gets a warning for every refused reading; nil discards.
	Logger *slog.Logger
	// Seen, if set, is told of every sensor a stored batch heard from, with the time
	// it was last heard (Liveness.Seen).
	Seen func(id SensorID, at time.Time)
	// Notified, if set, is called after a batch created notifications (Notifier.Wake).
	Notified func()
	// Observer is told of every batch stored and every one the store failed, for
	// metrics; nil tells no one.
	Observer Observer
}

// Ingester turns batches of reading messages into stored readings, state changes and
// notifications. It is the BatchHandler the queue consumers call, safe for concurrent
// use.
type Ingester struct {
	store Store
	cfg   IngesterConfig
	stats ingestCounters
}

// IngestStats counts what an Ingester did.
type IngestStats struct {
	Batches       uint64 `json:"batches"`
	Readings      uint64 `json:"readings"`      // stored, of known sensors
	Changed       uint64 `json:"changed"`       // readings that changed their sensor's state
	Same          uint64 `json:"same"`          // readings that repeated it
	Stale         uint64 `json:"stale"`         // readings older than one already applied
	Rejected      uint64 `json:"rejected"`      // messages put in the dead letters
	Restored      uint64 `json:"restored"`      // lost sensors heard again
	Notifications uint64 `json:"notifications"` // notifications created
	StoreErrors   uint64 `json:"store_errors"`  // batches the store failed (handed again later)
}

type ingestCounters struct {
	batches, readings, changed, same, stale, rejected, restored, notifications, storeErrors atomic.Uint64
}

// NewIngester returns an Ingester that stores readings in store.
func NewIngester(store Store, cfg IngesterConfig) (*Ingester, error) {
	if store == nil {
		return nil, errors.New("locks: NewIngester: store is nil")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	return &Ingester{store: store, cfg: cfg}, nil
}

// Stats returns the Ingester's counters.
func (in *Ingester) Stats() IngestStats {
	c := &in.stats
	return IngestStats{
		Batches: c.batches.Load(), Readings: c.readings.Load(), Changed: c.changed.Load(),
		Same: c.same.Load(), Stale: c.stale.Load(), Rejected: c.rejected.Load(),
		Restored: c.restored.Load(), Notifications: c.notifications.Load(), StoreErrors: c.storeErrors.Load(),
	}
}

// decoded is a message that parsed as a reading.
type decoded struct {
	Reading
	raw []byte
}

// HandleBatch implements BatchHandler: it stores msgs in one Store.Update, in their
// order. A message that is not a reading, or is one of an unregistered sensor, goes to
// the dead letters with the reason, in the same Update. A reading is stale when it is
// older (by ts) than one already applied: kept in the history, changing nothing. A
// reading that differs from its sensor's state changes it: the sensor's older pending
// notifications are cancelled and every linked client gets a "changed" notification,
// one per sensor and batch however often the batch changed it (the last change
// supersedes the others). A reading of a lost sensor restores it: "restored" to every
// linked client. A message handed twice (redelivered) is stored twice in the history,
// and notifies nobody the second time: it repeats the state, or is stale. The one
// exception is a redelivery of a reading followed by another with the same ts and the
// other value: it applies again (the later applied of equal ts wins) and notifies.
func (in *Ingester) HandleBatch(ctx context.Context, msgs []Message) error {
	var (
		readings []decoded
		dead     []DeadLetter
		ids      []SensorID
	)
	for _, m := range msgs {
		r, err := DecodeReading(m.Body)
		if err != nil {
			dead = append(dead, DeadLetter{Raw: m.Body, Reason: err.Error(), Received: m.Received.UTC().Truncate(time.Microsecond)})
			continue
		}
		r.Received = m.Received.UTC().Truncate(time.Microsecond)
		readings = append(readings, decoded{Reading: r, raw: m.Body})
		ids = append(ids, r.SensorID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)

	var t tally
	n, err := in.store.Update(ctx, ids, func(cur map[SensorID]Current) (Effects, error) {
		t = tally{}
		e := apply(cur, readings, dead, &t)
		e.Now = in.cfg.Clock.Now().UTC().Truncate(time.Microsecond)
		return e, nil
	})
	if err != nil {
		in.stats.storeErrors.Add(1)
		if o := in.cfg.Observer; o != nil {
			o.LockStoreFailed(PartIngester)
		}
		return fmt.Errorf("locks: store a batch of %d messages: %w", len(msgs), err)
	}
	in.count(t, n)
	if o := in.cfg.Observer; o != nil {
		o.LockBatchStored(BatchCounts{Changed: t.changed, Same: t.same, Stale: t.stale, Rejected: len(t.dead),
			Restored: t.restored, Notifications: n})
	}
	for _, d := range t.dead {
		in.cfg.Logger.Warn("locks: reading refused", "reason", d.Reason, "raw", string(d.Raw))
	}
	if in.cfg.Seen != nil {
		for id, at := range t.seen {
			in.cfg.Seen(id, at)
		}
	}
	if n > 0 && in.cfg.Notified != nil {
		in.cfg.Notified()
	}
	return nil
}

// tally is what one batch did, for the counters and the callbacks after the commit.
type tally struct {
	changed, same, stale, restored int
	dead                           []DeadLetter
	seen                           map[SensorID]time.Time
}

func (in *Ingester) count(t tally, notifications int) {
	c := &in.stats
	c.batches.Add(1)
	c.readings.Add(uint64(t.changed + t.same + t.stale))
	c.changed.Add(uint64(t.changed))
	c.same.Add(uint64(t.same))
	c.stale.Add(uint64(t.stale))
	c.restored.Add(uint64(t.restored))
	c.rejected.Add(uint64(len(t.dead)))
	c.notifications.Add(uint64(notifications))
}

// apply decides what readings do to the sensors' states cur (locked by the Store).
func apply(cur map[SensorID]Current, readings []decoded, dead []DeadLetter, t *tally) Effects {
	e := Effects{DeadLetters: slices.Clone(dead)}
	touched := map[SensorID]bool{}
	changedAt := map[SensorID]bool{}
	restoredAt := map[SensorID]Reading{} // the reading that ended the silence
	var changeOrder, restoreOrder []SensorID
	t.seen = map[SensorID]time.Time{}
	for _, r := range readings {
		c, ok := cur[r.SensorID]
		if !ok {
			e.DeadLetters = append(e.DeadLetters, DeadLetter{Raw: r.raw, Received: r.Received,
				Reason: (&FieldError{Field: "sensor_id", Problem: fmt.Sprintf("%q is not a registered sensor", r.SensorID)}).Error()})
			continue
		}
		outcome := Same
		switch {
		case c.Known && r.At.Before(c.ReadingAt):
			// Of two readings with one ts the later one applied wins: a door opened and
			// closed within a second (ts in whole seconds) must not stay open until the
			// next reading.
			outcome = Stale
		case !c.Known || r.State != c.State:
			outcome = Changed
			c.Known, c.State, c.ChangedAt = true, r.State, r.At
			if !changedAt[r.SensorID] {
				changedAt[r.SensorID] = true
				changeOrder = append(changeOrder, r.SensorID)
			}
		}
		if outcome != Stale {
			c.ReadingAt = r.At
		}
		if r.Received.After(c.LastSeen) {
			c.LastSeen = r.Received
		}
		if c.Lost {
			c.Lost = false
			restoredAt[r.SensorID] = r.Reading
			restoreOrder = append(restoreOrder, r.SensorID)
		}
		cur[r.SensorID] = c
		touched[r.SensorID] = true
		t.seen[r.SensorID] = c.LastSeen
		e.Readings = append(e.Readings, StoredReading{SensorID: r.SensorID, State: r.State, At: r.At, Received: r.Received, Outcome: outcome})
		switch outcome {
		case Changed:
			t.changed++
		case Same:
			t.same++
		case Stale:
			t.stale++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(touched)) {
		e.States = append(e.States, cur[id])
	}
	// The change notifications go first: Cancel applies before Notify, so a restoration
	// found in the same batch is not cancelled by the change.
	e.Cancel = changeOrder
	for _, id := range changeOrder {
		c := cur[id]
		e.Notify = append(e.Notify, Change{SensorID: id, Event: EventChanged, State: c.State, At: c.ChangedAt, ReadingAt: c.ChangedAt})
	}
	for _, id := range restoreOrder {
		r := restoredAt[id]
		e.Notify = append(e.Notify, Change{SensorID: id, Event: EventRestored, State: cur[id].State, At: r.Received, ReadingAt: r.At})
	}
	t.restored = len(restoreOrder)
	t.dead = e.DeadLetters
	return e
}

var _ BatchHandler = (*Ingester)(nil)
