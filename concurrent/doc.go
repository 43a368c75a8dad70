// Package concurrent delivers feed messages to the customer's listeners in parallel while
// keeping the one order that matters: the messages of each match (sport event) reach the
// listener in the order they arrived, and the news that a producer is up reaches the
// customer only after every message of the recovery behind it has been processed.
//
// Dispatcher (a feed.Dispatcher) runs the customer's feed.OddsFeedListener on a Pool of
// workers, its own (NewDispatcher) or one that the dispatchers of several sessions share
// (Pool.Dispatcher); SerialDispatcher is its serial twin, for a listener that must see
// every message in arrival order across matches; StatusGate wraps the customer's
// feed.GlobalEventsListener and holds each producer's up back (GateConfig.HoldLimit
// bounds how long before GateConfig.OnHoldLimit hears of it: the SDK then takes the
// producer down and recovers it again); a TaskLifecycleTracker,
// shared by all of them, counts the tasks of each RecoveryContext (a producer and the
// request id of a recovery, or live messages).
//
// # Scheduling by match
//
// Each message becomes a task of its match. The scheduler keeps a FIFO per active match
// and a ready list of the matches that have tasks and no worker; an idle worker takes the
// match at the head of the list, runs a few of its tasks, and gives it back. A match is on
// at most one worker at a time, so its order holds; a match whose listener call stalls
// holds that one worker and delays no other match while a worker is free (and until its
// own queued tasks fill Config.QueueSize, which then slows the reading side down).
//
// A Pool shared by several listeners keeps one FIFO per match for all of them, so a
// match's messages from two sessions run in the order they were dispatched, and
// Config.Threads is the number of workers in all. Each listener keeps its own customer
// listener, Stream, Stats (Pool.Stats has their sums) and Close, which delivers its own
// tasks while the others go on.
//
// Hashing matches onto a fixed set of single-worker queues, the usual design, would let
// a stalled match hold up every match that hashed to its queue; the benchmarks keep that
// design as the baseline (BenchmarkHeadOfLine).
//
//	session reading goroutine ──Dispatch──► per-match FIFOs ──► ready list ──► workers ──► decode ──► customer OddsFeedListener
//	                                            │                                 │
//	                                            └── TaskLifecycleTracker ◄────────┘ allocated / started / completed, per RecoveryContext
//	                                                      │
//	recovery manager ──► StatusGate ──(up held until the context is idle)──► customer GlobalEventsListener
//
// # The processed point
//
// The tracker also follows, per producer, how far the listeners have got: each session's
// dispatcher allocates its tasks on a Stream of the tracker, and the session's alives
// (subscribed=1) are reported to the same Stream, in the order they were read. The
// producer's processed point is the feed timestamp of the latest alive before which every
// message read, on every Stream, has finished its listener call (Processed, OnProcessed):
// the point a recovery can start from after an outage or a restart without losing what
// was still queued. It is kept by counts per alive, moved by whichever task finishes last,
// with no lock per message. A Dispatcher dispatches on a Stream of its own
// (Dispatcher.Stream); the SDK in package feedkit does the wiring.
//
// # Metrics
//
// Config.Observer (SerialConfig.Observer, GateConfig.Observer) is told of each listener
// call, with the pool's Name, the message's producer and type and how the call ended, and
// of each up a StatusGate holds back and releases: counts that a metrics library turns
// into counters, equal to what the Stats count. Levels (tasks queued, calls running) are
// read from Stats when metrics are collected. The queue wait and duration of a call are
// measured for one call in Config.TimingSample (64 by default): reading the clock for
// every call would add a fifth to a third of the pool's own work per message, where
// counting adds a few nanoseconds. The calls are picked as they are queued, under the
// lock that queuing takes anyway, so that an untimed task never reads the clock. A nil
// Observer costs a nil check per call.
//
// # Wiring
//
// The SDK in package feedkit does this wiring; a program that assembles the parts itself
// shares one TaskLifecycleTracker between the dispatchers (one per session) and the global
// listener, tells the tracker what the recovery manager needs to hear, and reports each
// session's alives to its dispatcher's Stream:
//
//	tracker := concurrent.NewTaskLifecycleTracker()
//	tracker.OnProcessed(manager.ProcessedThrough)   // the recovery point follows the listeners
//	tracker.OnCallFailed(manager.ListenerFailed)    // a failed call is replayed by the next recovery
//	tracker.OnCallReturned(manager.ObserveProcessed) // the processing-delay check
//	pool, _ := concurrent.NewPool(tracker, concurrent.Config{Threads: 8}) // 8 workers for all sessions
//	odds, _ := pool.Dispatcher(myListener) // one per session
//	// or, a pool of its own: concurrent.NewDispatcher(myListener, tracker, concurrent.Config{})
//	// or, one call at a time in arrival order:
//	// odds, _ := concurrent.NewSerialDispatcher(myListener, tracker, concurrent.SerialConfig{})
//	global, _ := concurrent.NewStatusGate(myGlobal, tracker, concurrent.GateConfig{})
//	session, _ := feed.NewSession(transport, feed.SessionConfig{
//		Dispatcher: odds,
//		Global:     global,
//		System:     odds.Stream().MarkAlives(manager.SystemHandler()),
//	})
//	...
//	session.Close(ctx) // closes odds, its dispatcher, too
//	pool.Close(ctx)    // after its sessions
//	manager.Close(ctx) // after the listeners: it saves the point they reached
//	global.Close(ctx)  // the session does not own the global listener
package concurrent
