package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/feed/sportdata/changes"
	"github.com/feedkit/feedkit/internal/pgschema"
)

var _ changes.Store = (*Store)(nil)

// DefaultTablePrefix is the prefix of the table's name when Options.TablePrefix is empty.
const DefaultTablePrefix = "feedkit_changes_"

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// TablePrefix is prepended to the table's name: lower-case ASCII letters, digits and
	// underscores, not starting with a digit, at most 56 bytes (so that the name stays
	// within PostgreSQL's 63). Empty means DefaultTablePrefix.
	TablePrefix string
}

// ErrInvalidOptions is returned, wrapped, by NewStore for options that cannot be used.
var ErrInvalidOptions = pgschema.ErrInvalidOptions

// Store is a changes.Store in a PostgreSQL table, one row per kind of change. It is safe
// for concurrent use.
type Store struct {
	pool *pgxpool.Pool

	loadSQL, saveSQL string
}

// NewStore returns a store on pool, creating its table when missing. The pool stays the
// caller's to close.
func NewStore(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	prefix, err := pgschema.Prefix(opts.TablePrefix, DefaultTablePrefix, "cursors")
	if err != nil {
		return nil, err
	}
	name := prefix + "cursors"
	table := pgx.Identifier{name}.Sanitize()
	err = pgschema.Migrate(ctx, pool, "feedkit/changes/pgstore: migrate "+name,
		`CREATE TABLE IF NOT EXISTS `+table+` (
			kind   text        PRIMARY KEY,
			at     timestamptz NOT NULL,
			events text[]      NOT NULL
		)`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: create table %s: %w", name, err)
	}
	return &Store{
		pool:    pool,
		loadSQL: `SELECT kind, at, events FROM ` + table,
		saveSQL: `INSERT INTO ` + table + ` (kind, at, events) VALUES ($1, $2, $3)
			ON CONFLICT (kind) DO UPDATE SET at = EXCLUDED.at, events = EXCLUDED.events`,
	}, nil
}

// row is a cursor as its table holds it.
type row struct {
	Kind   string
	At     time.Time
	Events []string
}

// Load implements changes.Store. A row it cannot read (a kind or an event id that does
// not parse) is an error naming it.
func (s *Store) Load(ctx context.Context) ([]changes.Cursor, error) {
	rows, _ := s.pool.Query(ctx, s.loadSQL)
	rs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return nil, fmt.Errorf("pgstore: load: %w", err)
	}
	out := make([]changes.Cursor, 0, len(rs))
	for _, r := range rs {
		c := changes.Cursor{At: pgschema.Out(r.At), Events: make([]feed.URN, len(r.Events))}
		if err := c.Kind.UnmarshalText([]byte(r.Kind)); err != nil {
			return nil, fmt.Errorf("pgstore: load cursor %q: %w", r.Kind, err)
		}
		for i, e := range r.Events {
			if c.Events[i], err = feed.ParseURN(e); err != nil {
				return nil, fmt.Errorf("pgstore: load cursor %q: event %q: %w", r.Kind, e, err)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Save implements changes.Store, in one statement. The time is stored to the
// microsecond.
func (s *Store) Save(ctx context.Context, c changes.Cursor) error {
	kind, err := c.Kind.MarshalText()
	if err != nil {
		return fmt.Errorf("pgstore: save: %w", err)
	}
	events := make([]string, len(c.Events))
	for i, u := range c.Events {
		events[i] = u.String()
	}
	if _, err := s.pool.Exec(ctx, s.saveSQL, string(kind), pgschema.In(c.At), events); err != nil {
		return fmt.Errorf("pgstore: save the %s cursor: %w", kind, err)
	}
	return nil
}
