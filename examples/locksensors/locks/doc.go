// Package locks is the domain of the lock-sensor notification service in
// examples/locksensors: sensors, clients and the links between them, the readings
// the sensors send, the state each sensor is in, and the notifications that tell the
// linked clients when a lock's state changes or a sensor goes silent or comes back.
//
// The package holds the types, the rules (Ingester decides what a batch of readings
// changes, Notifier delivers notifications with durable retries, Liveness finds silent
// sensors through a heartbeat.Monitor), the HTTP API, and the Store they all write
// through. A Store's one write of readings, Update, runs the rules under the sensors'
// locks and commits everything they decided at once, so that two consumers never both
// notify the same change. MemoryStore keeps everything in the process's memory;
// locks/pgstore keeps it in PostgreSQL, and locks/lockstest holds the conformance suite
// both pass. Each of Ingester, Notifier and Liveness is given its Store when it is
// made: its Config holds only settings with defaults.
// Readings reach the Ingester (a BatchHandler) from locks/rabbitmq's Consumer, or from
// a LocalQueue in the process.
//
// For metrics, an Observer in the configs of the Ingester, the Notifier and the
// Liveness is told what each does as it happens: the readings of each stored batch by
// outcome and the messages rejected, each attempt to deliver a notification by outcome
// (delivered, failed with a retry due, dead) and its duration, the cancellations, the
// sensors lost and restored, and the store errors. It is never told a sensor's id, and
// what it is told sums to the parts' Stats.
//
// # What a receiver sees
//
// A client receives a POST with a JSON Body for each event of each sensor linked to it:
// "changed" (the lock's state changed), "lost" (the sensor has been silent for
// LivenessConfig.Silence) and "restored" (a lost sensor was heard again).
//
// Each notification arrives at least once: an attempt whose answer was lost, or that
// outlasted its timeout, is made again, with the same Idempotency-Key header and the
// same body. A notification whose client keeps failing is retried on the Schedule and
// is given up (dead) after MaxAttempts, until an operator replays it.
//
// Notifications arrive in no promised order, not even those of one sensor. A Notifier
// makes its attempts in parallel (Workers of them, in every process sharing the
// Store), a failed attempt is retried later while newer notifications go ahead, and an
// attempt under way when a newer change supersedes it still arrives, possibly after
// the newer one; a replayed notification arrives whenever it is replayed. Delivering a
// sensor's notifications in order would make each wait for every attempt of the ones
// before it: behind a notification its client refuses, the newer news of that sensor
// would wait for minutes of retries, and a client would learn the latest state last.
//
// What orders them is the sequence: every notification carries its sensor's sequence,
// 1 for the sensor's first event and one more for each next one, changed, lost and
// restored alike, assigned in the same write that records the event (so events
// recorded at once by several processes are numbered in the order they were recorded,
// with no gap and no repeat). All the clients told of one event get the same sequence,
// and every attempt to deliver a notification the same as the first. So a receiver
// keeps, for each sensor, the highest sequence it has acted on, and drops a
// notification whose sequence is not higher: it arrived after newer news (or is a
// retry of one it has). What the receiver keeps is then the latest state it has been
// told of, whatever order the notifications came in; once the sensor's latest
// notification has been delivered, it is the sensor's latest state. Latest is that rule
// for a receiver in Go. A receiver that acts on every event (an alarm on each "lost",
// say) may act on a late one as well, knowing from the sequence that it is not the
// latest news.
//
// A gap in the sequences a client sees is normal: a "changed" still pending when the
// next change of its sensor is recorded is cancelled (superseded), not delivered, and
// a client linked to a sensor after its first events never sees those. The sensor's
// current state and the sequence of its latest event are at GET /sensors/{id}/state.
// A sensor deleted and registered again is a new sensor whose sequences start from 1
// again: its clients must be told to forget what they kept of the old one.
//
// Each notification also carries the time of the event ("time") and the sensor's own
// time of the reading it is about ("reading_at"), as the sensor sent it.
package locks
