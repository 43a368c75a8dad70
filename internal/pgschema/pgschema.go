// Package pgschema holds what the PostgreSQL backends (recovery/pgstore,
// workflow/pgstore, ...) share about their tables: checking a configurable table-name
// prefix, and creating tables safely when several processes start at once.
package pgschema

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrInvalidOptions is the error, wrapped, of options a backend cannot use; each pgstore
// package exports it as its own ErrInvalidOptions.
var ErrInvalidOptions = errors.New("invalid options")

// Prefix returns the table-name prefix to use for a backend's Options.TablePrefix p:
// def when p is empty, else p if CheckPrefix accepts it, else an error naming the field
// and wrapping ErrInvalidOptions.
func Prefix(p, def, longest string) (string, error) {
	if p == "" {
		return def, nil
	}
	if err := CheckPrefix(p, longest); err != nil {
		return "", fmt.Errorf("pgstore: Options.TablePrefix %q: %v: %w", p, err, ErrInvalidOptions)
	}
	return p, nil
}

// CheckPrefix reports why p cannot prefix table names whose longest is p+longest: it
// must be lower-case letters, digits and underscores, not start with a digit, and keep
// every name within PostgreSQL's 63 bytes. The message names no field; callers do.
func CheckPrefix(p, longest string) error {
	if maxLen := 63 - len(longest); len(p) > maxLen {
		return fmt.Errorf("longer than %d bytes", maxLen)
	}
	for i := range len(p) {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return fmt.Errorf("only lower-case letters, digits and underscores, not starting with a digit")
		}
	}
	return nil
}

// Migrate runs stmts (CREATE TABLE IF NOT EXISTS and the like) in one transaction under
// a transaction-level advisory lock on lock: PostgreSQL's IF NOT EXISTS is not safe
// against a concurrent creation of the same table, so processes starting together would
// otherwise fail on each other's; with the lock they create the tables once.
func Migrate(ctx context.Context, pool *pgxpool.Pool, lock string, stmts ...string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", lock); err != nil {
			return err
		}
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}
