package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/internal/pgschema"
)

// migrate creates table name once, however many processes start at once.
func migrate(ctx context.Context, pool *pgxpool.Pool, name string, stmts ...string) error {
	if err := pgschema.Migrate(ctx, pool, "feedkit/recovery/pgstore: migrate "+name, stmts...); err != nil {
		return fmt.Errorf("pgstore: create table %s: %w", name, err)
	}
	return nil
}
