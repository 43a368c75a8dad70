package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrate runs the statements that create a table in one transaction, under an advisory
// lock on name, so that processes starting together create it once and neither fails.
func migrate(ctx context.Context, pool *pgxpool.Pool, name string, stmts ...string) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "feedkit/recovery/pgstore: migrate "+name); err != nil {
			return err
		}
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgstore: create table %s: %w", name, err)
	}
	return nil
}
