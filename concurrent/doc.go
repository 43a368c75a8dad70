// Package concurrent delivers feed messages to the customer's listeners in parallel while
// keeping the one order that matters: the messages of each match (sport event) reach the
// listener in the order they arrived, and the news that a producer is up reaches the
// customer only after every message of the recovery behind it has been processed.
//
// It implements the seed's concurrent listener, with these names:
//
//	seed                                 package concurrent
//	ConcurrentOddsFeedListener           OddsFeedListener (a feed.Dispatcher)
//	ConcurrentSDKGlobalEventsListener    GlobalEventsListener
//	TaskLifecycleTracker                 TaskLifecycleTracker
//	RecoveryContext                      RecoveryContext
//	ConcurrentListenerConfig             Config
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
// The seed hashed matches onto a fixed set of single-worker queues instead, so a stalled
// match held up every match that hashed to its queue; the benchmarks keep that design as
// the baseline (BenchmarkHeadOfLine).
//
//	session reading goroutine ──Dispatch──► per-match FIFOs ──► ready list ──► workers ──► decode ──► customer OddsFeedListener
//	                                            │                                 │
//	                                            └── TaskLifecycleTracker ◄────────┘ allocated / started / completed, per RecoveryContext
//	                                                      │
//	recovery manager ──► GlobalEventsListener ──(up held until the context is idle)──► customer GlobalEventsListener
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
// with no lock per message. An OddsFeedListener dispatches on a Stream of its own
// (OddsFeedListener.Stream); the SDK in package feedkit does the wiring.
//
// # Wiring
//
// One TaskLifecycleTracker is shared by the SDK's OddsFeedListeners (one per session) and
// its GlobalEventsListener:
//
//	tracker := concurrent.NewTaskLifecycleTracker()
//	odds, _ := concurrent.NewOddsFeedListener(myListener, tracker, concurrent.Config{})
//	global, _ := concurrent.NewGlobalEventsListener(myGlobal, tracker, concurrent.GlobalConfig{})
//	session, _ := feed.NewSession(transport, feed.SessionConfig{Dispatcher: odds, Global: global})
//	...
//	session.Close(ctx) // closes odds, its dispatcher, too
//	global.Close(ctx)  // the session does not own the global listener
package concurrent
