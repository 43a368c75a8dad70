package pgstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/feedkit/feedkit/carousel"
	"github.com/feedkit/feedkit/carousel/carouseltest"
	"github.com/feedkit/feedkit/internal/pgtest"
)

// The suite runs on a shared table: its "unknown collection" case expects an empty
// answer, which a table per collection gives as an error instead (the table of an
// unknown collection does not exist), on purpose, see TestSourceQueryErrors. The table
// per collection is held to MemorySource's answers by TestSourceAgreesWithMemorySource.
func TestSourceConformance(t *testing.T) {
	carouseltest.TestSource(t, func(t *testing.T, collection string, items []carousel.Item) carousel.Source {
		pool := pgtest.Pool(t)
		_, err := pool.Exec(t.Context(), `CREATE TABLE items (
			id            text`+linguisticCollation(t, pool)+`,
			collection    text,
			last_modified timestamptz,
			PRIMARY KEY (collection, id))`)
		require.NoError(t, err)
		insertItems(t, pool, "items", `INSERT INTO items (id, last_modified, collection) VALUES ($1, $2, $3)`, items, collection)
		return newTestSource(t, pool, SourceOptions{Table: "items", CollectionColumn: "collection"})
	})
}

func TestMetadataStoreConformance(t *testing.T) {
	carouseltest.TestMetadataStore(t, func(t *testing.T) carousel.MetadataStore { return newTestStore(t, pgtest.Pool(t)) })
}

func TestFailoverConformance(t *testing.T) {
	carouseltest.TestFailover(t, func(t *testing.T) carousel.MetadataStore { return newTestStore(t, pgtest.Pool(t)) })
}
