package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgschema"
)

// DefaultTablePrefix is the prefix of the table and index names when
// Options.TablePrefix is empty.
const DefaultTablePrefix = "locksensors_"

// longestName is the longest table or index name after the prefix.
const longestName = "notifications_pending"

// ErrInvalidOptions is returned, wrapped, by New for options that cannot be used.
var ErrInvalidOptions = pgschema.ErrInvalidOptions

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// TablePrefix is prepended to the table and index names: lower-case ASCII letters,
	// digits and underscores, not starting with a digit, at most 42 bytes (so that every
	// name stays within PostgreSQL's 63). Empty means DefaultTablePrefix. Stores with
	// different prefixes keep separate data in one schema.
	TablePrefix string
}

var _ locks.Store = (*Store)(nil)

// Store is a locks.Store in PostgreSQL tables. It is safe for concurrent use, and any
// number of Stores, in any number of processes, may share the tables.
type Store struct {
	pool *pgxpool.Pool
	q    queries
}

// New returns a Store on pool, bringing its tables up to this version's schema first
// (see the package documentation). The pool stays the caller's to close. A database
// whose schema a newer version of the program has migrated is refused with
// ErrNewerSchema.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: New: pool is nil: %w", ErrInvalidOptions)
	}
	prefix, err := pgschema.Prefix(opts.TablePrefix, DefaultTablePrefix, longestName)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool, prefix); err != nil {
		return nil, err
	}
	return &Store{pool: pool, q: newQueries(prefix)}, nil
}

// expander returns a function that replaces the {name} placeholders of a SQL template
// with the quoted, prefixed names of the tables and indexes.
func expander(prefix string) func(string) string {
	var pairs []string
	for _, name := range []string{"schema_migrations", "sensors", "sensor_states", "clients", "links",
		"readings", "notifications", "attempts", "dead_letters",
		"links_client", "notifications_sensor", "notifications_due", "notifications_pending", "notifications_dead"} {
		pairs = append(pairs, "{"+name+"}", pgx.Identifier{prefix + name}.Sanitize())
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

// queries are the SQL texts of a Store, expanded once with its table names. The
// templates live next to the methods that run them.
type queries struct {
	// registry.go
	createSensor, getSensor, updateSensor, lockSensorState, deleteSensor, listSensors, sensorExists string
	createClient, getClient, updateClient, deleteClient, listClients, clientExists                  string
	link, unlink, linkedClients, current                                                            string
	// update.go
	lockStates, lockSensors, writeStates, insertReadings, insertDeadLetters, cancel, notify, liveness string
	// history.go
	readings, notifications, attemptsOf, notification, attemptsOfOne, deadNotifications, deadLetters string
	// outbox.go
	claim, claimed, killed, finish, addAttempt, replay, pending, nextDue string
}

func newQueries(prefix string) queries {
	x := expander(prefix)
	return queries{
		createSensor: x(createSensorSQL), getSensor: x(getSensorSQL), updateSensor: x(updateSensorSQL),
		lockSensorState: x(lockSensorStateSQL), deleteSensor: x(deleteSensorSQL), listSensors: x(listSensorsSQL),
		sensorExists: x(sensorExistsSQL),
		createClient: x(createClientSQL), getClient: x(getClientSQL), updateClient: x(updateClientSQL),
		deleteClient: x(deleteClientSQL), listClients: x(listClientsSQL), clientExists: x(clientExistsSQL),
		link: x(linkSQL), unlink: x(unlinkSQL), linkedClients: x(linkedClientsSQL), current: x(currentSQL),

		lockStates: x(lockStatesSQL), lockSensors: x(lockSensorsSQL), writeStates: x(writeStatesSQL),
		insertReadings: x(insertReadingsSQL), insertDeadLetters: x(insertDeadLettersSQL),
		cancel: x(cancelSQL), notify: x(notifySQL), liveness: x(livenessSQL),

		readings: x(readingsSQL), notifications: x(notificationsSQL), attemptsOf: x(attemptsOfSQL),
		notification: x(notificationSQL), attemptsOfOne: x(attemptsOfOneSQL),
		deadNotifications: x(deadNotificationsSQL), deadLetters: x(deadLettersSQL),

		claim: x(claimSQL), claimed: x(claimedSQL), killed: x(killedSQL), finish: x(finishSQL),
		addAttempt: x(addAttemptSQL), replay: x(replaySQL), pending: x(pendingSQL),
		nextDue: x(nextDueSQL),
	}
}

// inTx runs fn on a connection of the pool that fn puts in a transaction with explicit
// begin and commit statements, so that each travels in one batch with the statements
// next to it: pgx.Tx would spend a round trip on each. When fn fails with the
// transaction open, inTx rolls it back; if even that cannot be done, the pool closes the
// connection rather than reuse it mid-transaction.
func (s *Store) inTx(ctx context.Context, fn func(c *pgx.Conn) error) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer pc.Release()
	c := pc.Conn()
	err = fn(c)
	if err != nil && c.PgConn().TxStatus() != 'I' && ctx.Err() == nil {
		_, _ = c.Exec(ctx, "rollback")
	}
	return err
}

// committed returns the error of a commit, or one if the server rolled back instead (a
// statement of the transaction failed).
func committed(tag pgconn.CommandTag, err error) error {
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("commit: %s", tag)
	}
	return err
}

// Errors a method returns when a thing is missing. They read as MemoryStore's do, so
// that the API says the same whichever Store it runs on.
func sensorNotFound(id locks.SensorID) error {
	return fmt.Errorf("sensor %q: %w", id, locks.ErrNotFound)
}

func clientNotFound(id locks.ClientID) error {
	return fmt.Errorf("client %d: %w", id, locks.ErrNotFound)
}

func notificationNotFound(id locks.NotificationID) error {
	return fmt.Errorf("notification %d: %w", id, locks.ErrNotFound)
}

// failed wraps an error of the database with the operation that met it. An error of the
// contract (ErrNotFound and the like) is returned as it is.
func failed(op string, err error) error {
	if errors.Is(err, locks.ErrNotFound) || errors.Is(err, locks.ErrExists) || errors.Is(err, locks.ErrConflict) {
		return err
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

// bytesOf returns s for a NOT NULL bytea column: pgx sends a nil slice as NULL, and
// whether []byte("") is nil is not something to rely on.
func bytesOf(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}
