package pgtest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/internal/testenv"
)

// currentSchema returns the schema a connection of the pool creates tables in.
func currentSchema(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) string {
	t.Helper()
	var s *string
	require.NoError(t, q.QueryRow(t.Context(), "SELECT current_schema()").Scan(&s))
	require.NotNil(t, s, "current_schema() is NULL: the search_path schema does not exist")
	return *s
}

// schemaExists asks the server, on a connection of its own, whether the schema exists.
func schemaExists(t *testing.T, schema string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testenv.PGURL(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var exists bool
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists))
	return exists
}

func TestPoolHasASchemaOfItsOwnDroppedAtTheEnd(t *testing.T) {
	testenv.PGURL(t) // skip here, not only in the subtest, when there is no PostgreSQL
	var first, second string
	t.Run("inner", func(t *testing.T) {
		p1, p2 := Pool(t), Pool(t)
		first, second = currentSchema(t, p1), currentSchema(t, p2)
		assert.True(t, strings.HasPrefix(first, "t_"), first)
		assert.NotEqual(t, first, second, "every call gets a schema of its own")

		// Tables land in the pool's schema, and only there.
		_, err := p1.Exec(t.Context(), "CREATE TABLE things (id int PRIMARY KEY)")
		require.NoError(t, err)
		var where string
		require.NoError(t, p1.QueryRow(t.Context(), "SELECT table_schema FROM information_schema.tables WHERE table_name = 'things'").Scan(&where))
		assert.Equal(t, first, where)
		_, err = p2.Exec(t.Context(), "SELECT * FROM things")
		require.Error(t, err, "another pool's schema must not see the table")

		// Every connection of the pool uses the schema, not just the first one.
		conns := make([]*pgxpool.Conn, 3)
		for i := range conns {
			c, err := p1.Acquire(t.Context())
			require.NoError(t, err)
			conns[i] = c
		}
		for _, c := range conns {
			assert.Equal(t, first, currentSchema(t, c))
			c.Release()
		}

		// A second pool shares its schema, on connections of its own.
		p3 := SecondPool(t, p1)
		assert.NotSame(t, p1, p3)
		assert.Equal(t, first, currentSchema(t, p3))
		var pid1, pid3 int
		require.NoError(t, p1.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid1))
		require.NoError(t, p3.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid3))
		assert.NotEqual(t, pid1, pid3)

		assert.True(t, schemaExists(t, first))
	})
	require.NotEmpty(t, first)
	assert.False(t, schemaExists(t, first), "the schema must be dropped when the test ends")
	assert.False(t, schemaExists(t, second), "the schema must be dropped when the test ends")
}

func TestURLHasASchemaOfItsOwnDroppedAtTheEnd(t *testing.T) {
	testenv.PGURL(t) // skip here, not only in the subtest, when there is no PostgreSQL
	var schema string
	t.Run("inner", func(t *testing.T) {
		u := URL(t)
		conn, err := pgx.Connect(t.Context(), u)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
		schema = currentSchema(t, conn)
		assert.True(t, strings.HasPrefix(schema, "t_"), schema)
		_, err = conn.Exec(t.Context(), "CREATE TABLE things (id int PRIMARY KEY)")
		require.NoError(t, err)

		pool, err := pgxpool.New(t.Context(), u)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		assert.Equal(t, schema, currentSchema(t, pool), "a pool made from the URL uses the same schema")
	})
	require.NotEmpty(t, schema)
	assert.False(t, schemaExists(t, schema), "the schema must be dropped when the test ends")
}

func TestWithSearchPath(t *testing.T) {
	tests := []struct {
		base, wantOptions string
	}{
		{"postgres://u@h:5433/db?sslmode=disable", "-csearch_path=t_1"},
		{"postgresql://u@h/db", "-csearch_path=t_1"},
		{"postgres://u@h/db?options=-cstatement_timeout%3D5s&sslmode=disable", "-cstatement_timeout=5s -csearch_path=t_1"},
	}
	for _, tt := range tests {
		got, err := withSearchPath(tt.base, "t_1")
		require.NoError(t, err, tt.base)
		u, err := url.Parse(got)
		require.NoError(t, err)
		assert.Equal(t, tt.wantOptions, u.Query().Get("options"), tt.base)
		base, _ := url.Parse(tt.base)
		assert.Equal(t, base.Host, u.Host)
		assert.Equal(t, base.Path, u.Path)
		assert.Equal(t, base.Query().Get("sslmode"), u.Query().Get("sslmode"))
	}
	_, err := withSearchPath("host=h dbname=db", "t_1")
	assert.Error(t, err, "a keyword/value string is not supported")
}
