package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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

// Store is a carousel.MetadataStore in a PostgreSQL table, one row per cycle. It is safe
// for concurrent use, and any number of Stores, in any number of processes, may share
// the table.
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
			id       text        PRIMARY KEY,
			metadata json        NOT NULL,
			saved_at timestamptz NOT NULL
		)`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: create table %s: %w", name, err)
	}
	return &Store{
		pool:    pool,
		loadSQL: `SELECT metadata FROM ` + table + ` WHERE id = $1`,
		saveSQL: `INSERT INTO ` + table + ` (id, metadata, saved_at) VALUES ($1, $2, now())
			ON CONFLICT (id) DO UPDATE SET metadata = EXCLUDED.metadata, saved_at = EXCLUDED.saved_at`,
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
// may need.
func (s *Store) Save(ctx context.Context, m carousel.CycleMetadata) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("pgstore: save cycle %q: %w", m.CycleID, err)
	}
	if _, err := s.pool.Exec(ctx, s.saveSQL, m.CycleID, raw); err != nil {
		return fmt.Errorf("pgstore: save cycle %q: %w", m.CycleID, err)
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
