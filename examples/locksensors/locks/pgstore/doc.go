// Package pgstore keeps the lock-sensor service's locks.Store in PostgreSQL, so that
// several processes of the service share sensors, states, history and the outbox of
// notifications. It runs on a *pgxpool.Pool (pgx v5) that the caller owns and closes.
//
// # Schema
//
// The tables live in the schema the pool's search_path selects, their names (and their
// indexes') prefixed with Options.TablePrefix (default "locksensors_"):
//
//	sensors        (id text COLLATE "C" PRIMARY KEY, address)
//	sensor_states  (sensor_id PRIMARY KEY → sensors, known, state, reading_at,
//	                changed_at, last_seen, lost)                    -- NULL: zero time
//	clients        (id bigint identity PRIMARY KEY, name, url)
//	links          (sensor_id → sensors, client_id → clients, PRIMARY KEY (both))
//	readings       (id identity, sensor_id → sensors, state, at, received_at, outcome,
//	                PRIMARY KEY (sensor_id, at, id))                -- the history's order
//	notifications  (id identity PRIMARY KEY, sensor_id → sensors, client_id, event,
//	                state, at, created_at, status, attempts, next_attempt_at, reason,
//	                last_error, finished_at)
//	    -- (sensor_id, at, id); (next_attempt_at, id) WHERE pending (Claim);
//	    -- (sensor_id) WHERE pending (Update's cancel); (id) WHERE dead
//	attempts       (notification_id → notifications, id identity, n, at, duration,
//	                status_code, error, PRIMARY KEY (notification_id, id))
//	dead_letters   (id identity PRIMARY KEY, raw bytea, reason, received_at)
//
// Every reference is ON DELETE CASCADE, so deleting a sensor deletes its state, links,
// history and notifications, and deleting a client its links. A notification's client_id
// has no foreign key: its history outlives the client.
//
// Sensor ids compare in byte order (COLLATE "C"), as Go compares strings, whatever the
// database's collation. Durations are bigint nanoseconds.
//
// # Migrations
//
// New brings the tables to the schema this version knows before it returns. The
// versions applied are recorded in <prefix>schema_migrations (version, applied_at);
// each migration runs once, in order, in a transaction of its own, under a
// transaction-level advisory lock on the schema and prefix, so that processes starting
// together take turns and none trips over another's CREATE. A database recording a
// version newer than this program knows is refused with ErrNewerSchema rather than
// used with tables the program does not understand.
//
// Version 2 adds the sequence of each sensor's events (sensor_states.sequence, the
// count; notifications.sequence, the event's number) and notifications.reading_at.
// It numbers the notifications already stored: the rows of one event (one sensor,
// event, state, time and created_at) share a number, and each sensor's events are
// numbered 1, 2, ... in the order of their first ids, which is the order they were
// recorded; each state's count is its sensor's highest number. A change's reading_at is
// its time; that of an older loss or restoration is not known and stays NULL.
//
// # Writes
//
// Update, the ingest path, is one transaction of two round trips whatever the size of
// the batch: the first begins it and locks the states of the batch's sensors
// (SELECT ... WHERE sensor_id = ANY($1) ORDER BY sensor_id FOR NO KEY UPDATE, so that
// every Update takes its locks in the same order and concurrent ones never deadlock);
// the second, once fn has decided, writes the states, readings, dead letters,
// cancellations and notifications with one set-based statement each (UPDATE ... FROM
// unnest(...), INSERT ... SELECT FROM unnest(...)) and commits, all in one pgx.Batch.
// The notifications' statement also moves each sensor's count of events on by the
// events it records, in the state row the transaction has locked, and numbers the
// events from there: the sequences of a sensor are assigned one Update after another,
// in the order of their commits, however many processes write.
// What fn returns is checked before anything is written. DeleteSensor takes the
// sensor's state lock before deleting, in the same order as Update, whose inserts
// check the sensor's key.
//
// Claim is one transaction of two round trips too: a select of the due notifications,
// oldest due first, FOR NO KEY UPDATE SKIP LOCKED (so concurrent claims, in any
// process, take different ones and never wait for each other), joined with what the
// attempt needs; then the writes of their attempt counts and next attempts, or of
// their death, and the commit. Finish is one round trip (the conditional write of the
// notification and the insert of the attempt, in one implicit transaction), Replay a
// single statement.
//
// The explicit begin and commit travel in the batches of the statements next to them:
// pgx.Tx would spend a round trip on each.
//
// # Texts and times
//
// Addresses, names and URLs are text: the API checks them (valid UTF-8; a NUL is
// refused by the database). The free texts the service makes from what it received, a
// dead letter's reason and raw message, a notification's reason and last error and an
// attempt's error, are bytea, so that a message that is not UTF-8 is stored as it came
// and never fails the batch that carries it.
//
// PostgreSQL keeps microseconds: times are truncated to the microsecond on the way in
// and come back in UTC. The bounds of a history Range are rounded up to the
// microsecond, which selects exactly the stored times that the Range contains.
//
// # Errors
//
// locks.ErrNotFound, ErrExists and ErrConflict are wrapped with what was missing, in
// the words of locks.MemoryStore (`sensor "abc": not found`), so that the API says the
// same whichever store it runs on. The database's own errors are wrapped with the
// operation that met them ("pgstore: update: ...").
package pgstore
