// Package pgtest gives each test a PostgreSQL schema of its own on the test server that
// scripts/test.sh starts (FEEDKIT_PG_URL, read through internal/testenv), so that the
// tests of every PostgreSQL-backed package (recovery/pgstore, workflow/pgstore, carousel)
// can run in parallel, with each other and with themselves, on one database without
// seeing each other's tables.
//
// Pool returns a pool whose connections use a fresh schema; URL returns a connection URL
// that does the same, for code that connects by itself. Either way the schema, and every
// table in it, is dropped when the test ends. Without FEEDKIT_PG_URL the test is skipped
// (or fails under CI=true), as testenv.PGURL does.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/feedkit/feedkit/internal/testenv"
)

// setupTimeout bounds the creation and the dropping of a schema; a healthy loopback
// server takes milliseconds.
const setupTimeout = 30 * time.Second

// Pool returns a pool on the test database whose connections all use a new, empty
// schema of the test's own (through the search_path run-time parameter), so that the
// tables a test creates without a schema name land there. When the test ends the pool
// is closed and the schema dropped with everything in it; the test must by then have
// released every connection it acquired.
//
// A second pool on the same schema, to stand for a second process, comes from
// SecondPool.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	base := testenv.PGURL(t)
	cfg, err := pgxpool.ParseConfig(base)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", testenv.PGURLVar, err)
	}
	schema := createSchema(t, base)
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: open a pool: %v", err)
	}
	t.Cleanup(pool.Close) // registered after the schema's drop, so it runs before it
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("pgtest: connect to the test database: %v", err)
	}
	return pool
}

// SecondPool returns another pool on the schema of pool, as a second process would have:
// connections of its own, so that locks, transactions and advisory locks are contended
// as between processes. It is closed when the test ends, before the schema is dropped
// (a t.Cleanup registered after Pool's runs before it).
func SecondPool(t testing.TB, pool *pgxpool.Pool) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	p, err := pgxpool.NewWithConfig(ctx, pool.Config())
	if err != nil {
		t.Fatalf("pgtest: open a second pool: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// URL returns the URL of the test database with a new, empty schema of the test's own
// set as the search_path of every connection made with it (the URL's options parameter
// gets -csearch_path=...), for code that takes a URL rather than a pool. When the test
// ends the schema is dropped with everything in it; whatever connected with the URL must
// have disconnected by then (close it in a t.Cleanup registered after URL).
func URL(t testing.TB) string {
	t.Helper()
	base := testenv.PGURL(t)
	u, err := withSearchPath(base, createSchema(t, base))
	if err != nil {
		t.Fatalf("pgtest: %s: %v", testenv.PGURLVar, err)
	}
	return u
}

// withSearchPath returns the URL base with -csearch_path=schema added to its options
// parameter, after the options it already has.
func withSearchPath(base, schema string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("%q is not a postgres:// URL", base)
	}
	q := u.Query()
	opts := strings.TrimSpace(q.Get("options") + " -csearch_path=" + schema)
	q.Set("options", opts)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// createSchema creates a schema with a random name on the database at base and has it
// dropped, with everything in it, when the test ends. It returns the schema's name, a
// plain identifier that needs no quoting.
func createSchema(t testing.TB, base string) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	if err := exec(base, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := exec(base, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return schema
}

// exec runs one statement on a connection of its own. It does not take t.Context(),
// which is canceled before the cleanup functions run.
func exec(base, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to the test database: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}
