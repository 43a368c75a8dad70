package pgschema_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/pgschema"
	"github.com/feedkit/feedkit/internal/pgtest"
)

func TestCheckPrefix(t *testing.T) {
	for _, ok := range []string{"", "a", "my_app_", "_x9", "x_23456789"} {
		assert.NoError(t, pgschema.CheckPrefix(ok, "table"), ok)
	}
	for _, bad := range []string{"A", "9x", "my-app", "x y", "é"} {
		assert.ErrorContains(t, pgschema.CheckPrefix(bad, "table"), "lower-case", bad)
	}
	assert.ErrorContains(t, pgschema.CheckPrefix("abcdef", "x234567890123456789012345678901234567890123456789012345678"), "longer than 5 bytes")
}

// Twelve goroutines migrating at once create the table once, and none fails.
func TestMigrateConcurrently(t *testing.T) {
	pool := pgtest.Pool(t)
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 12 {
		wg.Go(func() {
			errs <- pgschema.Migrate(t.Context(), pool, "pgschema test", `CREATE TABLE IF NOT EXISTS things (id int PRIMARY KEY)`,
				`CREATE INDEX IF NOT EXISTS things_id ON things (id)`)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT count(*) FROM things").Scan(&n))
	assert.Zero(t, n)
}
