package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/internal/pgschema"
)

// DefaultTablePrefix is the prefix of the Store's table name when
// StoreOptions.TablePrefix is empty.
const DefaultTablePrefix = "feedkit_carousel_"

// metadataTable is the Store's table name, after the prefix.
const metadataTable = "cycle_metadata"

// StoreOptions configure a Store. The zero value is ready to use.
type StoreOptions struct {
	// TablePrefix is prepended to the table name: lower-case ASCII letters, digits and
	// underscores, not starting with a digit, at most 49 bytes (so that the name stays
	// within PostgreSQL's 63). Empty means DefaultTablePrefix.
	TablePrefix string
}

var _ carousel.MetadataStore = (*Store)(nil)

// Store is a carousel.MetadataStore in a PostgreSQL table, one row per cycle, with the
// generation that saved it. It is safe for concurrent use, and any number of Stores, in
// any number of processes, may share the table: a Save compares the generations and
// writes in one statement, under the row's lock.
type Store struct {
	pool                        *pgxpool.Pool
	loadSQL, saveSQL, deleteSQL string
}

// NewStore returns a Store on pool, creating its table when missing. The pool stays the
// caller's to close.
func NewStore(ctx context.Context, pool *pgxpool.Pool, opts StoreOptions) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: NewStore: pool is nil: %w", ErrInvalidOptions)
	}
	prefix := opts.TablePrefix
	if prefix == "" {
		prefix = DefaultTablePrefix
	}
	if err := pgschema.CheckPrefix(prefix, metadataTable); err != nil {
		return nil, fmt.Errorf("pgstore: StoreOptions.TablePrefix %q: %v: %w", prefix, err, ErrInvalidOptions)
	}
	name := prefix + metadataTable
	table := pgx.Identifier{name}.Sanitize()
	err := pgschema.Migrate(ctx, pool, "feedkit/carousel/pgstore: migrate "+name,
		`CREATE TABLE IF NOT EXISTS `+table+` (
			id         text        PRIMARY KEY,
			metadata   json        NOT NULL,
			saved_at   timestamptz NOT NULL,
			generation bigint      NOT NULL DEFAULT 0
		)`,
		// A table created before saves were fenced: its rows read as saved by generation 0.
		`ALTER TABLE `+table+` ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: create table %s: %w", name, err)
	}
	return &Store{
		pool:    pool,
		loadSQL: `SELECT metadata FROM ` + table + ` WHERE id = $1`,
		// The row is replaced only when its generation is not later than the save's; a
		// refused save updates no row.
		saveSQL: `INSERT INTO ` + table + ` AS m (id, metadata, saved_at, generation) VALUES ($1, $2, now(), $3)
			ON CONFLICT (id) DO UPDATE SET metadata = EXCLUDED.metadata, saved_at = EXCLUDED.saved_at,
				generation = EXCLUDED.generation
			WHERE m.generation <= EXCLUDED.generation`,
		deleteSQL: `DELETE FROM ` + table + ` WHERE id = $1`,
	}, nil
}

// Load implements carousel.MetadataStore.
func (s *Store) Load(ctx context.Context, id string) (carousel.CycleMetadata, bool, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, s.loadSQL, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return carousel.CycleMetadata{}, false, nil
	}
	if err != nil {
		return carousel.CycleMetadata{}, false, fmt.Errorf("pgstore: load cycle %q: %w", id, err)
	}
	var m carousel.CycleMetadata
	if err := json.Unmarshal(raw, &m); err != nil {
		return carousel.CycleMetadata{}, false, fmt.Errorf("pgstore: load cycle %q: %w", id, err)
	}
	return m, true, nil
}

// Save implements carousel.MetadataStore. The metadata is kept as CycleMetadata's JSON,
// whose times are RFC 3339 text: they keep their nanoseconds and offset, which a
// timestamptz column would round to microseconds and turn to UTC. The column is json,
// not jsonb, because jsonb refuses the escape \u0000, which an error text (LastError)
// may need. The generation is a bigint: one above math.MaxInt64 is refused (a Lease's
// counter and a FileToggle's nanoseconds stay far below).
func (s *Store) Save(ctx context.Context, m carousel.CycleMetadata, gen carousel.Generation) error {
	if gen > math.MaxInt64 {
		return fmt.Errorf("pgstore: save cycle %q: generation %d is above the bigint column's %d", m.CycleID, gen, int64(math.MaxInt64))
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("pgstore: save cycle %q: %w", m.CycleID, err)
	}
	tag, err := s.pool.Exec(ctx, s.saveSQL, m.CycleID, raw, int64(gen))
	if err != nil {
		return fmt.Errorf("pgstore: save cycle %q: %w", m.CycleID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: save cycle %q of generation %d: %w", m.CycleID, gen, carousel.ErrFenced)
	}
	return nil
}

// Delete implements carousel.MetadataStore.
func (s *Store) Delete(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, s.deleteSQL, id); err != nil {
		return fmt.Errorf("pgstore: delete cycle %q: %w", id, err)
	}
	return nil
}
