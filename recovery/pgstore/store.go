package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/feed"
	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/recovery"
)

var _ recovery.FencedStore = (*Store)(nil)

// Store is a recovery.Store in a PostgreSQL table, one row per producer, and a
// recovery.FencedStore: each row keeps the generation that saved it. It is safe for
// concurrent use. Record times come back in UTC, truncated to the microsecond.
type Store struct {
	pool *pgxpool.Pool

	loadSQL, saveSQL string
}

// NewStore returns a store on pool, creating its table when missing. The pool stays the
// caller's to close.
func NewStore(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	prefix, err := opts.prefix()
	if err != nil {
		return nil, err
	}
	name := prefix + "producers"
	table := pgx.Identifier{name}.Sanitize()
	err = migrate(ctx, pool, name,
		`CREATE TABLE IF NOT EXISTS `+table+` (
			producer              bigint      PRIMARY KEY,
			state                 text        NOT NULL,
			last_subscribed_at    timestamptz,
			recovery_requested_at timestamptz,
			recovery_snapshot_id  bigint      NOT NULL,
			recovery_node_id      bigint,
			last_disconnected_at  timestamptz
		)`,
		// Added after the table's first version: a table made before gets it, 0.
		`ALTER TABLE `+table+` ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0`,
	)
	if err != nil {
		return nil, err
	}
	const columns = `producer, state, last_subscribed_at, recovery_requested_at, recovery_snapshot_id, recovery_node_id, last_disconnected_at`
	return &Store{
		pool:    pool,
		loadSQL: `SELECT ` + columns + ` FROM ` + table,
		// A row saved by a later generation is left as it is: no row affected.
		saveSQL: `INSERT INTO ` + table + ` (` + columns + `, generation) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (producer) DO UPDATE SET
				state = EXCLUDED.state,
				last_subscribed_at = EXCLUDED.last_subscribed_at,
				recovery_requested_at = EXCLUDED.recovery_requested_at,
				recovery_snapshot_id = EXCLUDED.recovery_snapshot_id,
				recovery_node_id = EXCLUDED.recovery_node_id,
				last_disconnected_at = EXCLUDED.last_disconnected_at,
				generation = EXCLUDED.generation
			WHERE ` + table + `.generation <= EXCLUDED.generation`,
	}, nil
}

// row is a record as its table holds it.
type row struct {
	Producer            int64
	State               string
	LastSubscribedAt    *time.Time
	RecoveryRequestedAt *time.Time
	RecoverySnapshotID  int64
	RecoveryNodeID      *int64
	LastDisconnectedAt  *time.Time
}

// Load implements recovery.Store.
func (s *Store) Load(ctx context.Context) ([]recovery.Record, error) {
	rows, _ := s.pool.Query(ctx, s.loadSQL)
	rs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		return nil, fmt.Errorf("pgstore: load: %w", err)
	}
	records := make([]recovery.Record, 0, len(rs))
	for _, x := range rs {
		r := recovery.Record{
			Producer:            int(x.Producer),
			LastSubscribedAt:    pgschema.OutNull(x.LastSubscribedAt),
			RecoveryRequestedAt: pgschema.OutNull(x.RecoveryRequestedAt),
			RecoverySnapshotID:  x.RecoverySnapshotID,
			LastDisconnectedAt:  pgschema.OutNull(x.LastDisconnectedAt),
		}
		if err := r.State.UnmarshalText([]byte(x.State)); err != nil {
			return nil, fmt.Errorf("pgstore: load producer %d: %w", x.Producer, err)
		}
		if x.RecoveryNodeID != nil {
			r.RecoveryNodeID = feed.Node(int(*x.RecoveryNodeID))
		}
		records = append(records, r)
	}
	return records, nil
}

// Save implements recovery.Store: it inserts the record of r.Producer, or replaces it.
// Its times are stored truncated to the microsecond; zero times as NULL. It is
// SaveGeneration with generation 0.
func (s *Store) Save(ctx context.Context, r recovery.Record) error {
	return s.SaveGeneration(ctx, r, 0)
}

// SaveGeneration implements recovery.FencedStore, in one statement: the row is written
// only if the generation that saved it last is not later than gen.
func (s *Store) SaveGeneration(ctx context.Context, r recovery.Record, gen int64) error {
	state, err := r.State.MarshalText()
	if err != nil {
		return fmt.Errorf("pgstore: save producer %d: %w", r.Producer, err)
	}
	tag, err := s.pool.Exec(ctx, s.saveSQL, int64(r.Producer), string(state),
		pgschema.InNull(r.LastSubscribedAt), pgschema.InNull(r.RecoveryRequestedAt), r.RecoverySnapshotID, nodeToDB(r.RecoveryNodeID), pgschema.InNull(r.LastDisconnectedAt), gen)
	if err != nil {
		return fmt.Errorf("pgstore: save producer %d: %w", r.Producer, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: save producer %d as generation %d: %w", r.Producer, gen, recovery.ErrFenced)
	}
	return nil
}

// nodeToDB returns n as stored: nil for no node.
func nodeToDB(n feed.NodeID) *int64 {
	id, ok := n.Int()
	if !ok {
		return nil
	}
	id64 := int64(id)
	return &id64
}
