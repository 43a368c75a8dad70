package locks

import "time"

// Observer is told what an Ingester, a Notifier and a Liveness do as it happens, so
// that a metrics library can count and time it (IngesterConfig.Observer,
// NotifierConfig.Observer, LivenessConfig.Observer; one value may serve all three).
// Their Stats count the same things: each counter of IngestStats, NotifierStats and
// LivenessStats is a sum of what the Observer was told.
//
// Its methods are called on the parts' goroutines (a Notifier's workers, the queue
// consumers calling HandleBatch), concurrently, with no lock of the parts held, where
// their Stats count (an attempt is told before the Store records it): they must be
// quick, must not block and must not call back into the part. Every argument is bounded, fit for a metric's label: never a sensor,
// a client or a notification.
type Observer interface {
	// LockBatchStored is told after each batch an Ingester stored, with what it did.
	LockBatchStored(b BatchCounts)
	// LockNotificationAttempted is told after each attempt a Notifier made to deliver a
	// notification, with its outcome and how long it took.
	LockNotificationAttempted(outcome AttemptOutcome, took time.Duration)
	// LockNotificationCancelled is told of each notification a Notifier claimed and
	// cancelled without an attempt: its client was no longer linked to the sensor.
	LockNotificationCancelled()
	// LockSensorLost is told of each loss a Liveness recorded, with the number of "lost"
	// notifications it created (one per linked client).
	LockSensorLost(notifications int)
	// LockFalseAlarm is told of each silence a Liveness found that the Store knew the
	// end of (another process heard the sensor): no loss is recorded.
	LockFalseAlarm()
	// LockStoreFailed is told of each Store error a part met: a batch handed again
	// later, a claim or a record of an attempt that failed, a loss or a resync retried.
	LockStoreFailed(part Part)
}

// BatchCounts is what one stored batch of messages did, as LockBatchStored is told.
type BatchCounts struct {
	// Changed, Same and Stale count the readings stored, by their Outcome.
	Changed, Same, Stale int
	// Rejected counts the messages put in the dead letters: not a reading, or one of an
	// unregistered sensor.
	Rejected int
	// Restored counts the lost sensors the batch heard from again.
	Restored int
	// Notifications counts the notifications the batch created, "changed" and
	// "restored".
	Notifications int
}

// AttemptOutcome is how an attempt to deliver a notification ended.
type AttemptOutcome string

// The outcomes of an attempt, in lower case as a metric's label.
const (
	// AttemptDelivered: the client answered 2xx.
	AttemptDelivered AttemptOutcome = "delivered"
	// AttemptFailed: the attempt failed and a retry is due later.
	AttemptFailed AttemptOutcome = "failed"
	// AttemptDead: the last attempt failed, and the notification is given up.
	AttemptDead AttemptOutcome = "dead"
)

// Part names the part of the service that met a Store error, in lower case as a
// metric's label.
type Part string

// The parts that tell LockStoreFailed.
const (
	PartIngester Part = "ingester"
	PartNotifier Part = "notifier"
	PartLiveness Part = "liveness"
)
