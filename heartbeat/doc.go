// Package heartbeat tracks when each of many keys (a producer, a sensor, ...) last beat,
// and reports the keys that fall silent past their timeout: OnLost once when a key is
// found silent, OnRestored when a lost key beats again.
//
//	m, _ := heartbeat.New(heartbeat.Config[string]{
//		Timeout:    time.Hour,
//		OnLost:     func(id string, lastSeen time.Time) { ... },
//		OnRestored: func(id string, silentFor time.Duration) { ... },
//	})
//	go m.Run(ctx)      // or call m.Advance(now) from a loop of your own
//	m.Beat("sensor-1") // on every reading
//
// # Design: a timing wheel, no timer per key
//
// It is built for millions of keys that mostly beat on time. A runtime timer per key
// would cost an object and a heap operation per beat; scanning every key each tick would
// cost work in proportion to all keys, due or not. Instead the keys are spread over
// shards by their hash, each shard with its own lock, table and timing wheel:
//
//   - The table is both index and storage: an open-addressing hash table (linear probing,
//     53% to 80% full) of entries holding the key, its last seen, its timeout and two
//     list links. A beat finds the key and its last seen in one cache line, and there is
//     no heap object per key besides the key itself (a string's bytes). The key is hashed
//     once (hash/maphash): the top bits choose the shard, the low bits the slot.
//   - Time is cut in ticks of Config.Tick, counted from New. The wheel is an array of
//     buckets, each the head of a list of entries linked through the table; an entry sits
//     in the bucket of the tick in which its deadline (last seen + timeout) falls. Advance
//     visits the buckets of the ticks that passed, so its work is the number of ticks plus
//     the entries found in their buckets: with a million keys of which none is due, an
//     Advance of one tick looks at one empty bucket per shard.
//   - Beat on a tracked key only stores the new last seen, under the shard's lock: no
//     relinking (lazy rescheduling). When an entry's bucket comes up, its real deadline is
//     checked: if it has passed the key is lost, otherwise the entry moves to the bucket of
//     its real deadline. The cost of the laziness: a key that keeps beating is visited
//     about once per timeout (not once per beat), so the wheel does some work for live
//     keys too, about keys/timeout visits a second (a million keys with a one-hour
//     timeout: about 280 a second). Stats.Revisits counts these visits.
//   - A shard's wheel grows (by doubling, up to 65,536 buckets) to span the longest
//     timeout it sees, but never to more buckets than the shard has keys. A deadline beyond
//     the span goes around: its entry is visited once per turn of the wheel and put back.
//     So a shard of a few keys with long timeouts stays small, at the price of a few
//     visits per timeout.
//   - When a table grows (by half), its entries move, and the shard's wheel is rebuilt
//     from their deadlines: work in proportion to the shard's keys, amortised over the
//     inserts that filled it. Forget closes the gap it leaves by moving the following
//     entries back (no tombstones), mending their links.
//
// An Advance that finds many keys lost at once (after a long pause, or a restore after a
// long downtime) sweeps each shard's due entries under that shard's lock: about a tenth of
// a microsecond per key, during which beats of that shard wait.
//
// # When a key is found lost
//
// A key is lost once it has been silent for its whole timeout: its deadline D is its last
// beat plus its timeout, and a silence of exactly the timeout reaches it. A rule of
// "silent for longer than the limit" is a timeout of the limit plus 1ns, as package
// recovery gives its heartbeat limits.
//
// D is rounded up to the next tick boundary, the monitor's creation plus a multiple of
// Tick. The key is found lost by the first Advance(now) with now at or after that
// boundary: never before D, at most one Tick after it, and with a Tick of 1ns at D
// exactly. Run calls Advance at every boundary, so under Run a key is found lost at most
// one Tick (plus the Advance's own time) after its deadline. A key that beats before its
// deadline is never found lost. An entry whose deadline has passed when it is placed
// (restored after a downtime, beaten with an old time, given a shorter timeout) is found
// lost by the next Advance.
//
// A lost key is kept (Get says Lost) until it beats again or is forgotten: a key that
// never comes back costs its memory until Forget. Tables do not shrink.
//
// A test moves time with a fake clock (Config.Clock, package clock/clocktest) and calls
// Flush, which finds the keys due by the clock's time as Run would and returns once every
// callback owed has returned: it never waits for Run's goroutine to wake, nor sleeps.
//
// # Callbacks
//
// OnLost and OnRestored are never called with a lock held, so they may call the monitor
// (Get, Beat, Forget, ...). Each shard queues the callbacks it owes in the order of the
// state changes, and one goroutine at a time delivers them: OnLost normally on the
// goroutine calling Advance (or Run), OnRestored on the goroutine whose Beat restored the
// key, before the call returns. But when a goroutine owes a callback while another is
// delivering callbacks of the same shard, it leaves its callback to that goroutine, which
// delivers it right after its own, and returns without waiting. This keeps, for each key,
// lost and restored in order and never at once, even when a key beats at the very
// moment it is found lost, and lets a callback beat a key of its own shard without
// deadlock. Callbacks of keys in different shards may run at the same time, so they must
// be safe for concurrent use. A slow callback delays the callbacks of its shard, not the
// beats. A callback must not panic; if it does, the panic reaches the caller of Beat or
// Advance, the monitor stays consistent, and the callbacks still owed are delivered by
// the next Advance.
//
// # Restarts
//
// Snapshot returns every key's state as a slice of Entry, which encodes as is; Restore
// merges such a slice into a new monitor, so that a restarted process resumes: a key whose
// deadline passed while it was down is found lost by the first Advance, a key that was
// lost stays lost (no second OnLost) and calls OnRestored when it beats.
package heartbeat
