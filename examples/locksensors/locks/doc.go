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
// notify the same change. MemoryStore is the embedded default; locks/pgstore keeps
// everything in PostgreSQL, and locks/lockstest holds the conformance suite both pass.
// Readings reach the Ingester (a BatchHandler) from locks/rabbitmq's Consumer, or from
// a LocalQueue in the process.
package locks
