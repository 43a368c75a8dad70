package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNewerSchema is returned, wrapped, by New when the database's schema was migrated
// by a newer version of the program than this one, which does not know what changed.
var ErrNewerSchema = errors.New("schema is newer than this program knows")

// migrations are the schema's versions: migrations[i] brings a database from version i
// to i+1, and runs once, in a transaction of its own. A released migration is never
// edited; a change of the schema is a new one at the end.
var migrations = [][]string{
	// 1: the tables of the first release.
	{
		`CREATE TABLE {sensors} (
			id      text COLLATE "C" PRIMARY KEY,
			address text NOT NULL
		)`,
		// Apart from sensors, so that the writes of every reading (last_seen at least)
		// touch a narrow row that fits HOT updates (hence the fillfactor), and an
		// operator's change of an address never waits for the ingest's row locks.
		`CREATE TABLE {sensor_states} (
			sensor_id  text COLLATE "C" PRIMARY KEY REFERENCES {sensors} ON DELETE CASCADE,
			known      boolean     NOT NULL DEFAULT false,
			state      smallint    NOT NULL DEFAULT 0,
			reading_at timestamptz,
			changed_at timestamptz,
			last_seen  timestamptz,
			lost       boolean     NOT NULL DEFAULT false
		) WITH (fillfactor = 70)`,
		`CREATE TABLE {clients} (
			id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			name text NOT NULL,
			url  text NOT NULL
		)`,
		`CREATE TABLE {links} (
			sensor_id text COLLATE "C" NOT NULL REFERENCES {sensors} ON DELETE CASCADE,
			client_id bigint NOT NULL REFERENCES {clients} ON DELETE CASCADE,
			PRIMARY KEY (sensor_id, client_id)
		)`,
		`CREATE INDEX {links_client} ON {links} (client_id)`,
		// The key is the history's order, so that the one index serves both.
		`CREATE TABLE {readings} (
			id          bigint GENERATED ALWAYS AS IDENTITY,
			sensor_id   text COLLATE "C" NOT NULL REFERENCES {sensors} ON DELETE CASCADE,
			state       smallint    NOT NULL,
			at          timestamptz NOT NULL,
			received_at timestamptz NOT NULL,
			outcome     text        NOT NULL,
			PRIMARY KEY (sensor_id, at, id)
		)`,
		// client_id has no foreign key: a notification's history outlives its client.
		`CREATE TABLE {notifications} (
			id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			sensor_id       text COLLATE "C" NOT NULL REFERENCES {sensors} ON DELETE CASCADE,
			client_id       bigint      NOT NULL,
			event           text        NOT NULL,
			state           smallint    NOT NULL,
			at              timestamptz NOT NULL,
			created_at      timestamptz NOT NULL,
			status          text        NOT NULL,
			attempts        integer     NOT NULL DEFAULT 0,
			next_attempt_at timestamptz NOT NULL,
			reason          bytea       NOT NULL DEFAULT '',
			last_error      bytea       NOT NULL DEFAULT '',
			finished_at     timestamptz
		)`,
		`CREATE INDEX {notifications_sensor} ON {notifications} (sensor_id, at, id)`,
		`CREATE INDEX {notifications_due} ON {notifications} (next_attempt_at, id) WHERE status = 'pending'`,
		`CREATE INDEX {notifications_pending} ON {notifications} (sensor_id) WHERE status = 'pending'`,
		`CREATE INDEX {notifications_dead} ON {notifications} (id) WHERE status = 'dead'`,
		// Attempt numbers repeat (a replay counts from zero again, a slow attempt may
		// finish after its retry), so the history is ordered by an id of its own.
		`CREATE TABLE {attempts} (
			notification_id bigint      NOT NULL REFERENCES {notifications} ON DELETE CASCADE,
			id              bigint GENERATED ALWAYS AS IDENTITY,
			n               integer     NOT NULL,
			at              timestamptz NOT NULL,
			duration        bigint      NOT NULL,
			status_code     integer     NOT NULL,
			error           bytea       NOT NULL,
			PRIMARY KEY (notification_id, id)
		)`,
		`CREATE TABLE {dead_letters} (
			id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			raw         bytea       NOT NULL,
			reason      bytea       NOT NULL,
			received_at timestamptz NOT NULL
		)`,
	},
	// 2: the sequence of a sensor's events, counted in its state and carried by each
	// notification, and the sensor's time of the reading a notification is about.
	{
		`ALTER TABLE {sensor_states} ADD COLUMN IF NOT EXISTS sequence bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE {notifications} ADD COLUMN IF NOT EXISTS sequence bigint NOT NULL DEFAULT 0,
			ADD COLUMN IF NOT EXISTS reading_at timestamptz`,
		// The notifications of one event are the rows one Update created of one sensor
		// with one event, state and time; its events are numbered in the order of their
		// first ids, which is the order they were recorded in: the Updates of a sensor
		// take its lock one after another.
		`WITH events AS (
			SELECT sensor_id, created_at, event, state, at,
				row_number() OVER (PARTITION BY sensor_id ORDER BY min(id)) AS sequence
			FROM {notifications}
			GROUP BY sensor_id, created_at, event, state, at
		)
		UPDATE {notifications} AS n SET sequence = e.sequence
		FROM events e
		WHERE n.sensor_id = e.sensor_id AND n.created_at = e.created_at AND n.event = e.event
			AND n.state = e.state AND n.at = e.at`,
		// A change's time is its reading's; of an older loss or restoration the reading
		// is not known, and stays NULL.
		`UPDATE {notifications} SET reading_at = at WHERE event = 'changed'`,
		`UPDATE {sensor_states} AS st SET sequence = m.sequence
		FROM (SELECT sensor_id, max(sequence) AS sequence FROM {notifications} GROUP BY sensor_id) AS m
		WHERE st.sensor_id = m.sensor_id`,
	},
}

// migrate brings the tables of prefix to the last version of migrations, one migration
// per transaction, each under a transaction-level advisory lock on the schema and
// prefix: processes starting together take turns, and the first to get the lock applies
// what the others then find done.
func migrate(ctx context.Context, pool *pgxpool.Pool, prefix string) error {
	return migrateUpTo(ctx, pool, prefix, migrations)
}

// migrateUpTo is migrate to the last of ms, the first migrations, which a test of a
// migration stops at the version before it.
func migrateUpTo(ctx context.Context, pool *pgxpool.Pool, prefix string, ms [][]string) error {
	x := expander(prefix)
	for {
		done, err := migrateStep(ctx, pool, prefix, x, ms)
		if err != nil {
			return fmt.Errorf("pgstore: migrate tables %s*: %w", prefix, err)
		}
		if done {
			return nil
		}
	}
}

// migrateStep applies the next migration the database lacks, in a transaction, and
// reports whether there was none.
func migrateStep(ctx context.Context, pool *pgxpool.Pool, prefix string, x func(string) string, migrations [][]string) (done bool, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Advisory locks are per database; the schema in the key keeps the stores of
		// other schemas (other deployments, parallel tests) from waiting for this one.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(
			'feedkit/examples/locksensors/pgstore: migrate ' || coalesce(current_schema(), '') || '.' || $1, 0))`, prefix); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, x(`CREATE TABLE IF NOT EXISTS {schema_migrations} (
			version    integer     PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`)); err != nil {
			return err
		}
		var version int
		if err := tx.QueryRow(ctx, x(`SELECT coalesce(max(version), 0) FROM {schema_migrations}`)).Scan(&version); err != nil {
			return err
		}
		switch {
		case version > len(migrations):
			return fmt.Errorf("version %d recorded in %s, this program knows up to %d: %w",
				version, prefix+"schema_migrations", len(migrations), ErrNewerSchema)
		case version == len(migrations):
			done = true
			return nil
		}
		for _, stmt := range migrations[version] {
			if _, err := tx.Exec(ctx, x(stmt)); err != nil {
				return fmt.Errorf("migration %d: %w", version+1, err)
			}
		}
		_, err := tx.Exec(ctx, x(`INSERT INTO {schema_migrations} (version) VALUES ($1)`), version+1)
		return err
	})
	return done, err
}
